package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// Mutation testing of Check.
//
// RunCheckMutations damages a database one way at a time, through raw
// SQL behind the engine's back (its append-only triggers bypassed, as a
// disk's or a restore's damage would be), and asks of each damage: does
// Check report it, as a corrupt session named in the report, or is it
// harmless, every read answering exactly as before? Anything else (a
// silent wrong answer, a read failing where Check finds nothing, a report
// that is not ErrCorrupt or names nothing) fails the test.
//
// The damages are made from the tables the engine describes
// (CheckMutationHarness.Tables): for rows of the damaged session (for
// entries, one of each kind: the leaf, an entry on the active path, one
// off it, a root, a label and a compaction), each column changed, set
// NULL and swapped with another row's; each row deleted, and copied to a
// session that does not exist and to another session; and for entries,
// damage that keeps each row's checksum right, as an older writer's bug
// would leave: parent links made a cycle, a parent that does not exist or
// comes later, a torn last line, an id taken. Each damage is undone by
// copying the table back from a copy made before it.

// MutationFixtures are the files of the database RunCheckMutations
// damages, under testdata, the first the session damaged: branches,
// compactions, labels, usage, custom and unknown entry types, a name.
var MutationFixtures = []string{
	"pi1/edited-00.jsonl", "pi1/fork-00.jsonl", "piedge/unknown-types.jsonl",
	"piedge/labels-odd.jsonl", "piedge/names-odd.jsonl", "pirand/r0032.jsonl",
}

// BuildMutationDB imports MutationFixtures (testdata is their folder;
// under the race detector three of them) into s, the search index caught up before the last, which is left
// pending. It returns the sessions' ids in that order, and what the
// searches the answers compare find, from a store over s's database that
// writes nothing (NoWrites).
func BuildMutationDB(t *testing.T, s *store.Store, testdata string) ([]string, func(context.Context) (any, error)) {
	t.Helper()
	ctx := context.Background()
	var files, ids []string
	fixtures := MutationFixtures
	if RaceEnabled {
		// The damaged session, the one receiving copies and the pending.
		fixtures = []string{fixtures[0], fixtures[1], fixtures[len(fixtures)-1]}
	}
	for _, f := range fixtures {
		files = append(files, filepath.Join(testdata, f))
		meta, _ := ReadSessionFile(t, files[len(files)-1])
		ids = append(ids, meta.ID)
	}
	last := len(files) - 1
	opts := store.ImportOptions{Mode: jsonl.Lenient}
	_, err1 := s.Import(ctx, files[:last], opts)
	_, err2 := s.Index(ctx, store.IndexOptions{})
	_, err3 := s.Import(ctx, files[last:], opts)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	reader := store.New(NoWrites(s.Database()))
	return ids, func(ctx context.Context) (any, error) {
		// The hits: how many pending entries a search read is not an
		// answer (a mark lowered below an entry without text is a
		// valid state, that entry pending).
		var out [][]store.Hit
		for _, q := range []string{"the", "file", "summary", "hello"} {
			res, err := reader.Search(ctx, q, store.SearchOptions{})
			if err != nil {
				return nil, err
			}
			out = append(out, res.Hits)
		}
		return out, nil
	}
}

// CheckMutationHarness is what RunCheckMutations needs of an engine.
type CheckMutationHarness struct {
	// DB is the database, built by the caller (fixtures imported, the
	// search index caught up).
	DB sessiontree.Database
	// IDs are the sessions of DB: IDs[0] is damaged, IDs[1] receives
	// stray copies of its rows.
	IDs []string
	// Tables are the stored tables to damage.
	Tables []MutationTable
	// Exec runs statements in one transaction on a connection of the
	// test's own, with the triggers bypassed.
	Exec func(stmts ...string) error
	// Query returns the first column of each row of a query, as text.
	Query func(query string) ([]string, error)
	// Search returns what the searches the answers compare find.
	Search func(ctx context.Context) (any, error)
	// EntryKey is the SQL expression of an entries row's key as other
	// rows hold it (a parent's key), ParentKey the column holding the
	// parent's, BranchSeq the expression of a branch row's entry seq.
	EntryKey, ParentKey, BranchSeq string
	// Moved, when set, is the SQL expression of column col of a row of
	// table copied to the session whose key is the SQL expression to
	// ("" for the default: the session column set to it, seq moved past
	// the log's end, a session's id made new).
	Moved func(table, col, to string) string
	// Short samples one in Short of the damages (0: all; see
	// MutationSample).
	Short int
	// Unverified are the columns ("table.column") no check can verify,
	// with why: a damage to one of them that Check misses is counted,
	// and logged, not failed.
	Unverified map[string]string
}

// HeaderColumns are the columns of the sessions row holding the
// session's header (pi's first line), which only that row holds: no
// copy or checksum verifies them, so Check cannot tell a damaged one.
var HeaderColumns = map[string]string{
	"sessions.id": "the header's id", "sessions.version": "the header's version", "sessions.created_at": "the header's timestamp",
	"sessions.cwd": "the header's cwd", "sessions.parent_session": "the header's parent session",
}

// MutationSample is CheckMutationHarness.Short for this run: one in 40
// damages under the race detector (SQLite is many times slower there),
// one in 8 with -short, all in a plain run.
func MutationSample() int {
	switch {
	case RaceEnabled:
		return 40
	case testing.Short():
		return 8
	}
	return 0
}

// MutationTable is a stored table and its columns.
type MutationTable struct {
	Name string
	// Session is the column holding the session's key ("pk" for
	// sessions), or its id with SessionByID; "" when the table has none.
	Session     string
	SessionByID bool
	// Columns are its columns, generated ones left out.
	Columns []MutationColumn
	// Overriding is what an INSERT of whole rows needs after its column
	// list (PostgreSQL's identity: " OVERRIDING SYSTEM VALUE").
	Overriding string
}

// MutationColumn is a column of a MutationTable.
type MutationColumn struct {
	Name string
	// Kind is 'i' (integer), 'r' (real), 'b' (boolean) or 't' (text).
	Kind byte
	// NotNull: the schema refuses NULL. Key: part of the primary key.
	NotNull, Key bool
}

// mutation is one damage: statements applied after the table's copy
// (mut_save) is made, and the session it damages ("" none).
type mutation struct {
	name, session string
	table         *MutationTable
	stmts         []string
	// column is the column damaged ("table.column"), "" for a row.
	column string
	// namesEntry: the damage is to an entries row left in its place,
	// which a report must name.
	namesEntry bool
}

// mutationTally counts the damages by outcome.
type mutationTally struct {
	ran, caught, caughtAll, harmless, unverified, refused, noop int
	// last is the last report of a damage.
	last error
}

// RunCheckMutations runs the damages (see above) on h.DB.
func RunCheckMutations(t *testing.T, h CheckMutationHarness) {
	t.Helper()
	ctx := context.Background()
	if err := h.DB.Check(ctx, ""); err != nil {
		t.Fatalf("Check() of the database before any damage = %v", err)
	}
	base, err := h.answers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	muts := h.mutations(t)
	all := len(muts)
	if h.Short > 1 {
		muts = oneIn(muts, h.Short)
	}
	var n mutationTally
	for i := range muts {
		h.run(ctx, t, &muts[i], base, &n)
	}
	t.Logf("%d of %d damages ran: %d made (%d caught by the session's Check, %d by the whole database's only, %d harmless, %d missed in unverified columns), %d refused by the schema, %d changed nothing",
		len(muts), all, n.ran, n.caught, n.caughtAll, n.harmless, n.unverified, n.refused, n.noop)
	if err := h.DB.Check(ctx, ""); err != nil {
		t.Fatalf("Check() after every damage was undone = %v", err)
	}
	after, err := h.answers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := answersDiff(base, after); diff != "" {
		t.Fatalf("answers after every damage was undone differ:\n%s", diff)
	}
}

// answersDiff is how b differs from a ("" when alike), costs compared
// up to the order of their sum: a usage report adds the rows of
// usage_days in the order the engine reads them, which copying a table
// back may change (PostgreSQL's heap). Their JSON, numbers rounded, is
// compared first: cmp.Diff of the whole is slow.
func answersDiff(a, b checkAnswers) string {
	if ja, jb := roundedJSON(a), roundedJSON(b); ja != "" && ja == jb {
		return ""
	}
	return cmp.Diff(a, b, cmpopts.EquateApprox(1e-12, 0))
}

// roundedJSON is v's JSON with every number rounded to 12 digits ("" if
// it cannot be written).
func roundedJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return ""
	}
	b, _ = json.Marshal(roundNumbers(x))
	return string(b)
}

// roundNumbers rounds every number in a decoded JSON value to 12 digits.
func roundNumbers(x any) any {
	switch v := x.(type) {
	case float64:
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
		return r
	case []any:
		for i := range v {
			v[i] = roundNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = roundNumbers(v[k])
		}
	}
	return x
}

// checkAnswers are what the reads of the database answer: Answers,
// the reads from each entry of the damaged session, by entry id, its
// entries by type, and the searches.
type checkAnswers struct {
	Answers Answers
	Entries map[string]entryAnswers
	ByType  map[sessiontree.EntryType][]string
	Search  any
}

// entryAnswers are what the reads from one entry answer: the ids of its
// paths (the entries themselves are the log's), and its state.
type entryAnswers struct {
	Path, FullPath []string
	State          sessiontree.State
}

// entryIDs are the ids of es, and err.
func entryIDs(es []sessiontree.Entry, err error) ([]string, error) {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	return ids, err
}

// answers reads the database's checkAnswers.
func (h *CheckMutationHarness) answers(ctx context.Context) (checkAnswers, error) {
	a, err := readAnswers(ctx, h.DB, h.IDs)
	if err != nil {
		return checkAnswers{}, err
	}
	c := checkAnswers{Answers: a}
	if c.Entries, c.ByType, err = h.entryAnswers(ctx, h.IDs[0], a.Sessions[h.IDs[0]].Log); err != nil {
		return c, fmt.Errorf("%s: %w", h.IDs[0], err)
	}
	c.Search, err = h.Search(ctx)
	return c, err
}

// entryAnswers reads the entryAnswers of each entry of log, session id's,
// and its entries of each type.
func (h *CheckMutationHarness) entryAnswers(ctx context.Context, id string, log []sessiontree.Entry) (map[string]entryAnswers, map[sessiontree.EntryType][]string, error) {
	st, err := h.DB.OpenSession(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	out, byType := map[string]entryAnswers{}, map[sessiontree.EntryType][]string{}
	for _, e := range log {
		var a entryAnswers
		var errs [4]error
		a.Path, errs[0] = entryIDs(st.Path(ctx, e.ID))
		a.FullPath, errs[1] = entryIDs(st.FullPath(ctx, e.ID))
		a.State, errs[2] = st.State(ctx, e.ID)
		if _, ok := byType[e.Type]; !ok {
			byType[e.Type], errs[3] = entryIDs(st.EntriesByType(ctx, e.Type))
		}
		if err := errors.Join(errs[:]...); err != nil {
			return nil, nil, fmt.Errorf("entry %s: %w", e.ID, err)
		}
		out[e.ID] = a
	}
	return out, byType, nil
}

// run makes damage m, judges it and undoes it.
func (h *CheckMutationHarness) run(ctx context.Context, t *testing.T, m *mutation, base checkAnswers, n *mutationTally) {
	t.Helper()
	save := []string{`DROP TABLE IF EXISTS mut_save`, `CREATE TABLE mut_save AS SELECT * FROM ` + m.table.Name}
	if err := h.Exec(save...); err != nil {
		t.Fatalf("%s: copy the table: %v", m.name, err)
	}
	err := h.Exec(m.stmts...)
	switch {
	case err != nil:
		n.refused++
		t.Logf("damage %s: refused: %v", m.name, err)
	case h.unchanged(t, m.table):
		n.noop++
	default:
		n.ran++
		harmless := n.harmless
		problem := h.judge(ctx, m, base, n)
		if why, ok := h.Unverified[m.column]; ok && problem != "" && strings.HasPrefix(problem, "Check reports nothing") {
			n.unverified++
			t.Logf("damage %s missed: %s", m.name, why)
		} else if problem == "" && n.harmless > harmless {
			t.Logf("damage %s: harmless", m.name)
		} else if problem == "" {
			t.Logf("damage %s: %v", m.name, n.last)
		} else if problem != "" {
			t.Errorf("damage %s (%s): %s", m.name, strings.Join(m.stmts, "; "), problem)
		}
	}
	cols := columnList(m.table, func(c MutationColumn) string { return c.Name })
	if err := h.Exec(`DELETE FROM `+m.table.Name, `INSERT INTO `+m.table.Name+` (`+cols+`)`+m.table.Overriding+
		` SELECT `+cols+` FROM mut_save`, `DROP TABLE mut_save`); err != nil {
		t.Fatalf("%s: undo: %v", m.name, err)
	}
}

// unchanged reports whether tb holds the rows of its copy, mut_save.
func (h *CheckMutationHarness) unchanged(t *testing.T, tb *MutationTable) bool {
	t.Helper()
	diff := func(a, b string) string {
		return `(SELECT count(*) FROM (SELECT * FROM ` + a + ` EXCEPT SELECT * FROM ` + b + `) d)`
	}
	return h.one(t, `SELECT `+diff(tb.Name, "mut_save")+` + `+diff("mut_save", tb.Name)) == "0"
}

// judge says what is wrong with how the database takes damage m: ""
// when Check reports it, naming the session, or when it is harmless.
func (h *CheckMutationHarness) judge(ctx context.Context, m *mutation, base checkAnswers, n *mutationTally) string {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if m.session != "" {
		err := h.DB.Check(ctx, m.session)
		if errors.Is(err, sessiontree.ErrCorrupt) {
			n.caught++
			n.last = err
			if p := reportProblem(err, m.session); p != "" {
				return p
			}
			var ce *sessiontree.CorruptError
			if m.namesEntry && errors.As(err, &ce) && ce.EntryID == "" {
				return fmt.Sprintf("the report of damage to an entries row names no entry: %v", err)
			}
			return ""
		}
		if err != nil && !errors.Is(err, sessiontree.ErrNotFound) {
			return fmt.Sprintf("Check(%s) = %v, not ErrCorrupt", m.session, err)
		}
	}
	if err := h.DB.Check(ctx, ""); err != nil {
		if !errors.Is(err, sessiontree.ErrCorrupt) {
			return fmt.Sprintf("Check() = %v, not ErrCorrupt", err)
		}
		n.caughtAll++
		n.last = err
		return reportProblem(err, m.session)
	}
	got, err := h.answers(ctx)
	if err != nil {
		return fmt.Sprintf("Check reports nothing, and the reads fail: %v", err)
	}
	if diff := answersDiff(base, got); diff != "" {
		return "Check reports nothing, and the reads answer otherwise (-before +damaged):\n" + diff
	}
	n.harmless++
	return ""
}

// reportProblem says what is wrong with a report of damage to session
// id: "" when it is a CorruptError naming the session (or a database-wide
// check's report, which names the table; or the session's key, when its
// sessions row, and its id with it, is gone).
func reportProblem(err error, id string) string {
	var ce *sessiontree.CorruptError
	switch msg := err.Error(); {
	case !errors.As(err, &ce):
		return fmt.Sprintf("reported as %v, no CorruptError", err)
	case id != "" && !strings.Contains(msg, id) && !strings.Contains(msg, "PRAGMA") && !strings.Contains(msg, "session key"):
		return fmt.Sprintf("the report names no session: %v", err)
	}
	return ""
}

// columnList joins f of each column of t.
func columnList(t *MutationTable, f func(MutationColumn) string) string {
	var parts []string
	for _, c := range t.Columns {
		parts = append(parts, f(c))
	}
	return strings.Join(parts, ", ")
}

// quote is s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// mutations lists every damage.
func (h *CheckMutationHarness) mutations(t *testing.T) []mutation {
	t.Helper()
	key := h.one(t, `SELECT pk FROM sessions WHERE id = `+quote(h.IDs[0]))
	other := h.one(t, `SELECT pk FROM sessions WHERE id = `+quote(h.IDs[1]))
	kinds := h.entryKinds(t, key)
	var out []mutation
	for i := range h.Tables {
		tb := &h.Tables[i]
		for _, r := range h.rowPicks(tb, key, kinds) {
			out = append(out, h.rowMutations(tb, r, key, other)...)
		}
	}
	return append(out, h.entryMutations(t, key, kinds)...)
}

// one is the single value query returns.
func (h *CheckMutationHarness) one(t *testing.T, query string) string {
	t.Helper()
	vals, err := h.Query(query)
	if err != nil || len(vals) != 1 {
		t.Fatalf("%s: %v, %v", query, vals, err)
	}
	return vals[0]
}

// entryKind is a kind of entries row of the damaged session, and its seq.
type entryKind struct {
	name string
	seq  string
}

// entryKinds finds one entry of each kind in the session whose key is
// key; kinds the session has none of are left out.
func (h *CheckMutationHarness) entryKinds(t *testing.T, key string) []entryKind {
	t.Helper()
	branch := `SELECT ` + h.BranchSeq + ` FROM branch WHERE session = ` + key
	var out []entryKind
	for _, k := range []entryKind{
		{"leaf", `SELECT max(` + h.BranchSeq + `) FROM branch WHERE session = ` + key},
		{"on the path", branch + ` AND depth = 2`},
		{"off the path", `SELECT min(seq) FROM entries WHERE session = ` + key + ` AND seq NOT IN (` + branch + `)`},
		{"root", `SELECT min(seq) FROM entries WHERE session = ` + key + ` AND parent_id IS NULL`},
		{"label", `SELECT min(seq) FROM entries WHERE session = ` + key + ` AND type = 'label'`},
		{"compaction", `SELECT min(seq) FROM entries WHERE session = ` + key + ` AND type = 'compaction'`},
		{"last", `SELECT max(seq) FROM entries WHERE session = ` + key},
	} {
		vals, err := h.Query(k.seq)
		if err != nil {
			t.Fatalf("%s: %v", k.seq, err)
		}
		if len(vals) == 1 && vals[0] != "" {
			out = append(out, entryKind{k.name, vals[0]})
		}
	}
	return out
}

// rowPick is a row of a table to damage: a condition selecting it (and
// partner, another row, for swaps), by the rows of mut_save.
type rowPick struct {
	name, where, partner string
}

// rowPicks are the rows of tb damaged: one of each entry kind in
// entries, the damaged session's row in sessions, the session's first
// row by key elsewhere (the table's first when it has no session).
func (h *CheckMutationHarness) rowPicks(tb *MutationTable, key string, kinds []entryKind) []rowPick {
	if tb.Name == "entries" {
		var out []rowPick
		for i, k := range kinds {
			if slices.ContainsFunc(kinds[:i], func(o entryKind) bool { return o.seq == k.seq }) {
				continue // one row of two kinds (the leaf is often the last)
			}
			p := kinds[(i+1)%len(kinds)]
			out = append(out, rowPick{k.name, `session = ` + key + ` AND seq = ` + k.seq, `session = ` + key + ` AND seq = ` + p.seq})
		}
		return out
	}
	pk := columnList(&MutationTable{Columns: keyColumns(tb)}, func(c MutationColumn) string { return c.Name })
	nth := func(cond string, n int) string {
		return `(` + pk + `) = (SELECT ` + pk + ` FROM mut_save` + cond + ` ORDER BY ` + pk + ` LIMIT 1 OFFSET ` + strconv.Itoa(n) + `)`
	}
	switch {
	case tb.Name == "sessions":
		return []rowPick{{"the session's", `pk = ` + key, nth(` WHERE pk <> `+key, 0)}}
	case tb.Session == "":
		return []rowPick{{"first", nth("", 0), nth("", 1)}}
	}
	return []rowPick{{"the session's first", nth(` WHERE `+h.sessionIs(tb, key), 0), nth(` WHERE `+h.sessionIs(tb, key), 1)}}
}

// keyColumns are tb's primary key columns (every column when none is).
func keyColumns(tb *MutationTable) []MutationColumn {
	var out []MutationColumn
	for _, c := range tb.Columns {
		if c.Key {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return tb.Columns
	}
	return out
}

// sessionIs is the condition that a row of tb belongs to the session
// whose key is key.
func (h *CheckMutationHarness) sessionIs(tb *MutationTable, key string) string {
	if tb.SessionByID {
		return tb.Session + ` = (SELECT id FROM sessions WHERE pk = ` + key + `)`
	}
	return tb.Session + ` = ` + key
}

// rowMutations are the damages to row r of tb: each column changed, set
// NULL and swapped with the partner's; the row deleted, and copied to a
// session that does not exist and to the session whose key is other.
func (h *CheckMutationHarness) rowMutations(tb *MutationTable, r rowPick, key, other string) []mutation {
	var out []mutation
	session := h.IDs[0]
	if tb.Session == "" {
		session = "" // the row's session is not known
	}
	column := ""
	add := func(what string, stmts ...string) {
		out = append(out, mutation{name: fmt.Sprintf("%s: %s row: %s", tb.Name, r.name, what), session: session, table: tb, stmts: stmts,
			column: column, namesEntry: tb.Name == "entries" && column != "" && column != "entries.session"})
	}
	upd := `UPDATE ` + tb.Name + ` SET `
	for _, c := range tb.Columns {
		column = tb.Name + "." + c.Name
		add(c.Name+" changed", upd+c.Name+` = `+changed(c)+` WHERE `+r.where)
		if c.Kind == 'i' {
			add(c.Name+" lowered", upd+c.Name+` = `+c.Name+` - 1 WHERE `+r.where)
		}
		if !c.NotNull {
			add(c.Name+" NULL", upd+c.Name+` = NULL WHERE `+r.where)
		}
		add(c.Name+" swapped", upd+c.Name+` = (SELECT `+c.Name+` FROM mut_save WHERE `+r.partner+`) WHERE `+r.where,
			upd+c.Name+` = (SELECT `+c.Name+` FROM mut_save WHERE `+r.where+`) WHERE `+r.partner)
	}
	column = ""
	add("deleted", `DELETE FROM `+tb.Name+` WHERE `+r.where)
	// A copy is the damage of the session it lands in: a new one for a
	// sessions row, none for another table's.
	session = ""
	if tb.Name == "sessions" {
		session = h.IDs[0] + "-stray"
	}
	add("copied to a missing session", h.copyRow(tb, r, "999999"))
	if tb.Session != "" && tb.Name != "sessions" {
		session = h.IDs[1]
		add("copied to another session", h.copyRow(tb, r, other))
	}
	return out
}

// changed is an SQL expression of a value of c other than its own.
func changed(c MutationColumn) string {
	switch c.Kind {
	case 'i':
		return `coalesce(` + c.Name + `, 0) + 1`
	case 'r':
		return `coalesce(` + c.Name + `, 0) * 2 + 1`
	case 'b':
		return `NOT coalesce(` + c.Name + `, false)`
	}
	return `coalesce(` + c.Name + `, '') || 'x'`
}

// copyRow inserts a copy of row r of tb into the session whose key is
// to, skipping a copy whose key is taken.
func (h *CheckMutationHarness) copyRow(tb *MutationTable, r rowPick, to string) string {
	cols := columnList(tb, func(c MutationColumn) string { return c.Name })
	exprs := columnList(tb, func(c MutationColumn) string { return h.moved(tb, c.Name, to) })
	return `INSERT INTO ` + tb.Name + ` (` + cols + `)` + tb.Overriding + ` SELECT ` + exprs +
		` FROM mut_save WHERE ` + r.where + ` ON CONFLICT DO NOTHING`
}

// moved is the expression of column col of a row of tb copied to the
// session whose key is to.
func (h *CheckMutationHarness) moved(tb *MutationTable, col, to string) string {
	if h.Moved != nil {
		if e := h.Moved(tb.Name, col, to); e != "" {
			return e
		}
	}
	switch {
	case tb.Name == "sessions" && col == "pk":
		return to
	case tb.Name == "sessions" && col == "id":
		return `id || '-stray'`
	case col == tb.Session && tb.SessionByID:
		return `coalesce((SELECT id FROM sessions WHERE pk = ` + to + `), 'no-such-session')`
	case col == tb.Session, tb.Session == "" && col == "session":
		return to
	case col == "seq":
		return `seq + 1000000`
	case tb.Name == "imports" && col == "path":
		return `path || '-stray'` // a file of its own
	}
	return col
}

// entryMutations are the damages to entries that keep each row's
// checksum right: the rows as a writer that broke the tree's rules
// would have written them.
func (h *CheckMutationHarness) entryMutations(t *testing.T, key string, kinds []entryKind) []mutation {
	t.Helper()
	seq := map[string]string{}
	for _, k := range kinds {
		seq[k.name] = k.seq
	}
	tb := h.table("entries")
	var out []mutation
	add := func(what string, stmts ...string) {
		out = append(out, mutation{name: "entries: " + what, session: h.IDs[0], table: tb, stmts: stmts, namesEntry: true})
	}
	// A cycle: the root's parent made an entry below it.
	add("the root's parent is the leaf (a cycle)", h.reparent(t, key, seq["root"], seq["leaf"]))
	add("an entry its own parent", h.reparent(t, key, seq["on the path"], seq["on the path"]))
	add("a parent that comes later", h.reparent(t, key, seq["on the path"], seq["last"]))
	add("the root's parent columns name the leaf (a cycle in the columns)", h.parentColumns(key, seq["root"], seq["leaf"]))
	add("an entry's parent columns name itself", h.parentColumns(key, seq["off the path"], seq["off the path"]))
	add("an entry's parent columns name a later entry", h.parentColumns(key, seq["on the path"], seq["last"]))
	add("a parent that does not exist", h.rewrite(t, key, seq["on the path"], func(raw, id, parent string) (string, string) {
		return setParent(raw, parent, "no-such-entry"), `parent_id = 'no-such-entry', ` + h.ParentKey + ` = NULL`
	}))
	add("a torn last line", h.rewrite(t, key, seq["last"], func(raw, id, parent string) (string, string) {
		return raw[:len(raw)/2], ""
	}))
	add("an id taken by another entry", h.rewrite(t, key, seq["off the path"], func(raw, id, parent string) (string, string) {
		taken := h.one(t, `SELECT id FROM entries WHERE session = `+key+` AND seq = `+seq["root"])
		return strings.Replace(raw, `"id":"`+id+`"`, `"id":"`+taken+`"`, 1), `id = ` + quote(taken)
	}))
	return out
}

// table is the MutationTable named name.
func (h *CheckMutationHarness) table(name string) *MutationTable {
	for i := range h.Tables {
		if h.Tables[i].Name == name {
			return &h.Tables[i]
		}
	}
	panic("no table " + name)
}

// reparent is the statement making entry seq of the session whose key
// is key a child of entry parentSeq, its JSON and checksum with it.
func (h *CheckMutationHarness) reparent(t *testing.T, key, seq, parentSeq string) string {
	t.Helper()
	parentID := h.one(t, `SELECT id FROM entries WHERE session = `+key+` AND seq = `+parentSeq)
	return h.rewrite(t, key, seq, func(raw, id, parent string) (string, string) {
		return setParent(raw, parent, parentID), `parent_id = ` + quote(parentID) + `, ` + h.ParentKey +
			` = (SELECT ` + h.EntryKey + ` FROM mut_save WHERE session = ` + key + ` AND seq = ` + parentSeq + `)`
	})
}

// parentColumns is the statement pointing the parent columns (not the
// JSON) of entry seq of the session whose key is key at entry parentSeq.
func (h *CheckMutationHarness) parentColumns(key, seq, parentSeq string) string {
	parent := ` FROM mut_save WHERE session = ` + key + ` AND seq = ` + parentSeq + `)`
	return `UPDATE entries SET parent_id = (SELECT id` + parent + `, ` + h.ParentKey + ` = (SELECT ` + h.EntryKey + parent +
		` WHERE session = ` + key + ` AND seq = ` + seq
}

// rewrite is the statement replacing the JSON of entry seq of the
// session whose key is key by what edit makes of it (given its JSON, id
// and parent id), with its checksum, and setting the columns edit lists.
func (h *CheckMutationHarness) rewrite(t *testing.T, key, seq string, edit func(raw, id, parent string) (string, string)) string {
	t.Helper()
	where := ` WHERE session = ` + key + ` AND seq = ` + seq
	raw := h.one(t, `SELECT raw FROM entries`+where)
	id := h.one(t, `SELECT id FROM entries`+where)
	parent := h.one(t, `SELECT coalesce(parent_id, '') FROM entries`+where)
	newRaw, set := edit(raw, id, parent)
	if set != "" {
		set = ", " + set
	}
	return fmt.Sprintf(`UPDATE entries SET raw = %s, checksum = %d%s%s`, quote(newRaw), sessiontree.EntryChecksum([]byte(newRaw)), set, where)
}

// setParent replaces the parentId of an entry's JSON (from, "" for
// null) by to, in place, the JSON's order kept.
func setParent(raw, from, to string) string {
	old := `"parentId":null`
	if from != "" {
		old = `"parentId":"` + from + `"`
	}
	return strings.Replace(raw, old, `"parentId":"`+to+`"`, 1)
}

// NoWrites is d with ReadOnly saying it is read-only, so that a store
// over it writes nothing: its searches leave the index as it is, damage
// and all.
func NoWrites(d sessiontree.Database) sessiontree.Database { return noWrites{d} }

type noWrites struct{ sessiontree.Database }

func (noWrites) ReadOnly() error { return sessiontree.ErrReadOnly }
