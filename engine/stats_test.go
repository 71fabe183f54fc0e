package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/storetest"
)

// statsCase is one entry of statsLog: its type and its fields beyond the
// four common ones.
type statsCase struct {
	typ    sessiontree.EntryType
	fields string
}

// statsLog is a log that exercises every stats rule (PI1.md section 9) and
// the session list's first message: malformed usage of several kinds,
// bucket names (one that JSON must escape), tool calls, tool-result, usage-entry and summary usage,
// costs whose float sum depends on the order of the additions, and user
// messages without text before the first with text. Its entries chain,
// id sNN under sNN-1; the compaction keeps s02.
func statsLog() []statsCase {
	assistant := func(extra, usage string) statsCase {
		msg := `{"role":"assistant","content":[{"type":"text","text":"ok"}],"provider":"anthropic","model":"m1"` + extra
		if usage != "" {
			msg += `,"usage":` + usage
		}
		return statsCase{sessiontree.TypeMessage, `{"message":` + msg + `}}`}
	}
	usage := func(input, output string, cost string) string {
		return `{"input":` + input + `,"output":` + output + `,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":` + cost + `}`
	}
	user := func(content string) statsCase {
		return statsCase{sessiontree.TypeMessage, `{"message":{"role":"user","content":` + content + `}}`}
	}
	log := []statsCase{
		{sessiontree.TypeMessage, `{"message":{"role":"system","sections":[]}}`},
		user(`""`),
		user(`[{"type":"image","data":"x","mimeType":"image/png"}]`),
		user(`[{"type":"text","text":""}]`),
		user(`[{"type":"text","text":"first"},{"type":"image","data":"x"},{"type":"text","text":"message"},{"type":"text"}]`),
		user(`"later"`),
		{sessiontree.TypeMessage, `{"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}},` +
			`{"type":"text","text":"x"},{"type":"toolCall","id":"c2","name":"bash","arguments":{}}],"provider":"anthropic","model":"m1",` +
			`"usage":` + usage("10", "20", `{"input":0.01,"total":0.1}`) + `}}`},
		{sessiontree.TypeMessage, `{"message":{"role":"assistant","content":{"type":"toolCall"},"provider":"anthropic","model":"m1"}}`},
		assistant(`,"responseModel":"m1-2026"`, usage("1", "2", `{"total":0.2}`)),
		assistant(`,"responseModel":""`, usage("1", "2", `{"total":0.3}`)),
		{sessiontree.TypeMessage, `{"message":{"role":"assistant","content":[],"model":"m1","usage":` + usage("1", "2", `{"total":0.1}`) + `}}`},
		{sessiontree.TypeMessage, `{"message":{"role":"assistant","content":[],"provider":"q\"uote\\","model":"\u6a21\u578b\u2028\u0001",` +
			`"usage":` + usage("1", "2", `{"total":0.07}`) + `}}`},
		assistant("", usage(`"5"`, "2", `{"total":9}`)),
		assistant("", `{"input":5,"cost":{"total":9}}`),
		assistant("", `null`),
		assistant("", `[1,2]`),
		assistant("", usage("1.9", "-0.5", `5`)),
		assistant("", usage("1", "2", `{"total":"9"}`)),
		assistant("", usage("1e3", "2", `{"total":1}`)),
		{sessiontree.TypeMessage, `{"message":{"role":"assistant","content":[],"provider":"openai","model":"zero",` +
			`"usage":{"input":0,"output":0,"cost":{"total":0}}}}`},
		{sessiontree.TypeMessage, `{"message":{"role":"toolResult","toolCallId":"c1","content":[],"usage":` + usage("7", "8", `{"total":0.05}`) + `}}`},
		{sessiontree.TypeMessage, `{"message":{"role":"toolResult","toolCallId":"c2","content":[]}}`},
		{sessiontree.TypeMessage, `{"message":{"role":"bashExecution","command":"ls","output":"","usage":` + usage("1", "1", `{"total":1}`) + `}}`},
		{sessiontree.TypeUsage, `{"kind":"cache_warm","provider":"anthropic","model":"m1","usage":` + usage("3", "1", `{"total":0.0338904}`) + `}`},
		{sessiontree.TypeUsage, `{"kind":"cache_warm","provider":"anthropic","usage":` + usage("3", "1", `{"total":0.1}`) + `}`},
		{sessiontree.TypeUsage, `{"kind":"other","provider":"anthropic","model":"m1","usage":"none"}`},
		{sessiontree.TypeCompaction, `{"summary":"so far","firstKeptEntryId":"s02","tokensBefore":100,"usage":` + usage("100", "50", `{"total":0.25}`) + `}`},
		{sessiontree.TypeBranchSummary, `{"fromId":"s03","summary":"left","usage":` + usage("10", "5", `{"total":0.125}`) + `}`},
		{sessiontree.TypeCustomMessage, `{"customType":"note","content":"hi","display":true,"usage":` + usage("1", "1", `{"total":1}`) + `}`},
		{"future_thing", `{"usage":` + usage("1", "1", `{"total":1}`) + `,"payload":[1,2,3]}`},
	}
	// Ten costs of 0.1 add up to 0.9999999999999999 one at a time, to 1
	// with compensated summation.
	for range 10 {
		log = append(log, assistant("", usage("1", "1", `{"total":0.1}`)))
	}
	return log
}

const statsTS = "2026-03-01T10:00:00.000Z"

func statsID(i int) string { return fmt.Sprintf("s%02d", i) }

// statsEntries builds statsLog as entries chained under parent ("" for
// a root).
func statsEntries(t testing.TB, prefix, parent string) []sessiontree.Entry {
	t.Helper()
	var out []sessiontree.Entry
	for i, c := range statsLog() {
		fields := strings.ReplaceAll(c.fields, `"s0`, `"`+prefix+`s0`)
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: c.typ, Fields: json.RawMessage(fields)}, prefix+statsID(i), parent, statsTS)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
		parent = e.ID
	}
	return out
}

// wantStats is what the root package's rules give over st's whole log.
func wantStats(t testing.TB, st *engine.Storage) sessiontree.Stats {
	t.Helper()
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var tally sessiontree.Tally
	for _, e := range log {
		tally.Add(e)
	}
	return tally.Stats()
}

// checkStats compares Stats with a replay of the log, exactly.
func checkStats(t testing.TB, name string, st *engine.Storage) {
	t.Helper()
	got, err := st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantStats(t, st), got); diff != "" {
		t.Errorf("%s: Stats() (-log +stored):\n%s", name, diff)
	}
}

// TestStatsEveryWritePath writes the stats log by single appends, by
// batches of several sizes (so that buckets continue across batches), and
// by batches in a caller's transaction, each time after entries with
// costs already stored: Stats equals the root package's tally of the log,
// bit for bit, and Check (at cleanup) agrees.
func TestStatsEveryWritePath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)

	appended := newSession(t, db)
	for _, e := range statsEntries(t, "", "") {
		d := sessiontree.Draft{Type: e.Type, ID: e.ID, Timestamp: e.Timestamp, Fields: fieldsOf(t, e)}
		if _, err := appended.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	checkStats(t, "appended", appended)

	log := statsEntries(t, "", "")
	for _, size := range []int{1, 3, 7, len(log)} {
		batched := newSession(t, db)
		for rest := log; len(rest) > 0; {
			n := min(size, len(rest))
			if err := batched.AppendBatch(ctx, rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		checkStats(t, fmt.Sprintf("batches of %d", size), batched)
	}

	// A batch after single appends, and one in a transaction: both start
	// from the sums already stored.
	mixed := newSession(t, db)
	for _, e := range log[:8] {
		if _, err := mixed.Append(ctx, sessiontree.Draft{Type: e.Type, ID: e.ID, Timestamp: e.Timestamp, Fields: fieldsOf(t, e)},
			sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := mixed.AppendBatch(ctx, log[8:20]); err != nil {
		t.Fatal(err)
	}
	err := db.Update(ctx, func(tx *engine.Tx) error { return tx.AppendBatch(mixed, log[20:]) })
	if err != nil {
		t.Fatal(err)
	}
	// And more on top, in a second copy of the log on another branch.
	if _, err := mixed.SetLeaf(ctx, log[10].ID, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := mixed.AppendBatch(ctx, statsEntries(t, "b", log[10].ID)); err != nil {
		t.Fatal(err)
	}
	checkStats(t, "mixed", mixed)

	got, err := mixed.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Breakdown[0].Key != "anthropic/m1" || got.ToolCalls != 4 || got.AssistantMessages != 2*24 {
		t.Errorf("Stats() = %+v; want anthropic/m1 first, 4 tool calls, 48 assistant messages", got)
	}
	for _, b := range got.Breakdown {
		if b.Key == "openai/zero" {
			t.Errorf("Stats().Breakdown has the empty bucket %q", b.Key)
		}
	}

}

// fieldsOf returns an entry's fields beyond the four common ones.
func fieldsOf(t testing.TB, e sessiontree.Entry) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(e.Raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"type", "id", "parentId", "timestamp"} {
		delete(m, k)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFirstUserText checks the session list's first message as the
// engine stores it: pi's rule (sessiontree.UserText), through appends
// and batches alike.
func TestFirstUserText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	appended, batched := newSession(t, db), newSession(t, db)
	log := statsEntries(t, "", "")
	for _, e := range log {
		if _, err := appended.Append(ctx, sessiontree.Draft{Type: e.Type, ID: e.ID, Timestamp: e.Timestamp, Fields: fieldsOf(t, e)},
			sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := batched.AppendBatch(ctx, log); err != nil {
		t.Fatal(err)
	}
	empty := newSession(t, db)
	if err := empty.AppendBatch(ctx, log[:4]); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, db.Path())
	for _, tt := range []struct {
		st   *engine.Storage
		want any
	}{{appended, "first message "}, {batched, "first message "}, {empty, nil}} {
		var got any
		if err := raw.QueryRowContext(ctx, `SELECT first_user_text FROM sessions WHERE id = ?`, tt.st.ID()).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("first_user_text = %#v; want %#v", got, tt.want)
		}
	}
}

// TestStatsBackfill makes a database at migration 8 holding the pi
// fixtures (testdata/pi and testdata/pi1) and the stats log, with stale
// counters, opens it with the engine, which applies migration 9, and
// checks that the migration's SQL gives what the root package's rules
// give: Check replays every session through sessiontree.Tally and
// sessiontree.UserText (at cleanup), and Stats equals that of the same
// sessions written by this engine.
func TestStatsBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	current := openDB(t, filepath.Join(dir, "current.db"), engine.Options{})
	ids := importFixtures(t, current)
	st := newSession(t, current)
	if err := st.AppendBatch(ctx, statsEntries(t, "", "")); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, st.ID())

	oldPath := filepath.Join(dir, "old.db")
	makeVersion8(t, oldPath)
	old, err := sqlx.Open("sqlite", "file:"+oldPath+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	old.SetMaxOpenConns(1)
	const v8Sessions = `pk, id, version, created_at, cwd, parent_session, updated_at, name, leaf_pk, leaf_id,
		leaf_depth, boundary_depth, entry_count, message_count, input_tokens, output_tokens, cache_read_tokens,
		cache_write_tokens, cost, deleting, first_user_text, metadata, indexed_count`
	const v8Entries = `pk, session, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth,
		thinking_pk, model_pk, tools_pk, target_id, custom_type, role, raw, canonical`
	for _, stmt := range []string{
		`ATTACH DATABASE '` + current.Path() + `' AS cur`,
		`INSERT INTO sessions (` + v8Sessions + `) SELECT ` + v8Sessions + ` FROM cur.sessions`,
		// What migration 9 recomputes, made stale.
		`UPDATE sessions SET message_count = 0, input_tokens = 1, output_tokens = 2, cache_read_tokens = 3,
			cache_write_tokens = 4, cost = 0.5, first_user_text = 'stale', indexed_count = 0`,
		`INSERT INTO entries (` + v8Entries + `) SELECT ` + v8Entries + ` FROM cur.entries`,
		`INSERT INTO branch SELECT * FROM cur.branch`,
		`INSERT INTO labels SELECT * FROM cur.labels`,
		`DETACH DATABASE cur`,
	} {
		if _, err := old.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	old.Close()

	upgraded := openDB(t, oldPath, engine.Options{})
	for _, id := range ids {
		want, err := current.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := upgraded.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		wantStats, err := want.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		gotStats, err := got.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantStats, gotStats); diff != "" {
			t.Errorf("session %s: Stats() after migration 9 (-written +migrated):\n%s", id, diff)
		}
	}
	if err := upgraded.Check(ctx, ""); err != nil {
		t.Errorf("Check() after migration 9 = %v", err)
	}
}

// importFixtures imports every file of testdata/pi and testdata/pi1 into
// db and returns the session ids in that order.
func importFixtures(t testing.TB, db *engine.DB) []string {
	t.Helper()
	var ids []string
	for _, pattern := range []string{"../testdata/pi/*.jsonl", "../testdata/pi1/*.jsonl"} {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			t.Fatalf("no fixtures %s: %v", pattern, err)
		}
		for _, p := range paths {
			ids = append(ids, importFile(t, db, p))
		}
	}
	return ids
}

// importFile imports a pi session file (any version) into db with one
// batch and returns the session id.
func importFile(t testing.TB, db *engine.DB, path string) string {
	t.Helper()
	ctx := context.Background()
	meta, entries := storetest.ReadSessionFile(t, path)
	st, err := db.CreateSession(ctx, meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendBatch(ctx, entries); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st.ID()
}

// makeVersion8 makes an empty database with the migrations up to 8.
func makeVersion8(t testing.TB, path string) {
	t.Helper()
	old := migrationsUpTo(t, 8)
	db, err := sqlx.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res, err := migrate.Up(context.Background(), db, old, migrate.Options{ApplicationID: engine.ApplicationID}); err != nil || res.To != 8 {
		t.Fatalf("migrations 1 to 8: %+v, %v", res, err)
	}
}

// migrationsUpTo returns the embedded migrations with versions up to
// last, as a database of an older release was made.
func migrationsUpTo(t testing.TB, last int64) fstest.MapFS {
	t.Helper()
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for _, m := range migs {
		if m.Version <= last {
			b, err := fs.ReadFile(migrate.Files, m.Name)
			if err != nil {
				t.Fatal(err)
			}
			out[m.Name] = &fstest.MapFile{Data: b}
		}
	}
	return out
}
