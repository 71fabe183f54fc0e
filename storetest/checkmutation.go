package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// copying the table back from a copy made before it. The damages to the
// session's header (HeaderColumns) all run, whatever the sample, and
// each must be reported: none is harmless, and an export of the session
// must refuse it too (it would write another first line).

// MutationFixtures are the files of the database RunCheckMutations
// damages, under testdata, the first the session damaged: branches,
// compactions, labels, usage, custom and unknown entry types, a name.
var MutationFixtures = []string{
	"pi1/edited-00.jsonl", "pi1/fork-00.jsonl", "piedge/unknown-types.jsonl",
	"piedge/labels-odd.jsonl", "piedge/names-odd.jsonl", "pirand/r0032.jsonl",
}

// BuildMutationDB imports MutationFixtures (testdata is their folder;
// under the race detector three of them) into s, the search index caught
// up before the last, which is left pending. It returns the sessions' ids in that order, and what the
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
// session's header (pi's first line, which an export writes from them)
// and its checksum (sessiontree.HeaderChecksum), by their names in both
// engines' schemas. Only that row holds them, so only the checksum tells
// a damaged one: their damages are never sampled out and must each be
// reported by Check (a changed header is never harmless: an export would
// write another first line).
var HeaderColumns = []string{"id", "version", "created_at", "cwd", "parent_session", "header_checksum"}

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
	// header: the damage is to a column of HeaderColumns, which Check
	// must report.
	header bool
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
		muts = sample(muts, h.Short)
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

// sample is one in n of muts, and every damage to the header.
func sample(muts []mutation, n int) []mutation {
	header := func(m mutation) bool { return m.header }
	rest := slices.DeleteFunc(slices.Clone(muts), header)
	return append(slices.DeleteFunc(muts, func(m mutation) bool { return !m.header }), oneIn(rest, n)...)
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
	if p := exportRefused(ctx, h.DB, m); p != "" {
		return p
	}
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
	if m.header {
		return "Check reports nothing of a damaged header"
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

// exportRefused says what is wrong with an export of the session whose
// header damage m changed ("" when it is refused as corrupt, or m is
// another damage): an export writes the file's first line from the
// header columns, and must not write another header than the session's.
// A changed id leaves no session to export.
func exportRefused(ctx context.Context, db sessiontree.Database, m *mutation) string {
	if !m.header || m.column == "sessions.id" {
		return ""
	}
	err := store.New(db).Export(ctx, m.session, io.Discard, store.ExportOptions{})
	if !errors.Is(err, sessiontree.ErrCorrupt) {
		return fmt.Sprintf("an export of the session with its header damaged = %v, not ErrCorrupt", err)
	}
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

// NoWrites is d with ReadOnly saying it is read-only, so that a store
// over it writes nothing: its searches leave the index as it is, damage
// and all.
func NoWrites(d sessiontree.Database) sessiontree.Database { return noWrites{d} }

type noWrites struct{ sessiontree.Database }

func (noWrites) ReadOnly() error { return sessiontree.ErrReadOnly }
