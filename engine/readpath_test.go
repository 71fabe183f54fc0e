package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestReadShapes reads entries whose JSON starts with their fields (the
// canonical shape, read from the JSON's start) and entries in other
// shapes (decoded whole): fields in another order, escaped, or the shape
// followed by the same names again, which the decoder takes instead. Every
// read gives the fields the entry was appended with.
func TestReadShapes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st := newSession(t, db)
	raws := []string{
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"x"}}`,
		`{"id":"a2","timestamp":"2026-03-01T10:00:01.000Z","parentId":"a1","type":"message","message":{"role":"user","content":"x"}}`,
		`{"type":"message","id":"a\u0033","parentId":"a2","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"user","content":"x"}}`,
		`{"type":"message","id":"dup","parentId":"a3","timestamp":"2026-03-01T10:00:03.000Z","id":"a4","message":{"role":"user","content":"x"}}`,
		`{"type":"label","id":"a5","parentId":"a4","timestamp":"2026-03-01T10:00:04.000Z","targetId":"a1","label":"l"}`,
	}
	var want []sessiontree.Entry
	for _, raw := range raws {
		e, err := sessiontree.DecodeEntry([]byte(raw))
		if err != nil {
			t.Fatalf("DecodeEntry(%s): %v", raw, err)
		}
		want = append(want, e)
	}
	if err := st.AppendBatch(ctx, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i].Seq = int64(i + 1)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("Log (-want +got):\n%s", diff)
	}
	path, err := st.Path(ctx, "a5")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, path); diff != "" {
		t.Errorf("Path(a5) (-want +got):\n%s", diff)
	}
	heads, err := st.LogHeads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withoutRaw(want), heads); diff != "" {
		t.Errorf("LogHeads (-want +got):\n%s", diff)
	}
	for _, w := range want {
		got, err := st.Entry(ctx, w.ID)
		if err != nil || !cmp.Equal(w, got) {
			t.Errorf("Entry(%q) = %+v, %v; want %+v", w.ID, got, err, w)
		}
	}
}

// TestCanonicalBackfill checks migration 16: rows left unmarked, as
// migration 6 left the rows before it, are marked canonical when their JSON
// starts with their columns as json_quote writes them, and stay unmarked
// otherwise; every mark then holds (Check), and the reads are unchanged.
func TestCanonicalBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	emptyDB.CopyTo(t, path)
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	appendLines(t, st,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"x"}}`,
		`{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"x"}}`,
		`{"id":"a3","type":"message","parentId":"a2","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"user","content":"x"}}`,
		`{"type":"message","id":"a\u0034","parentId":"a3","timestamp":"2026-03-01T10:00:03.000Z","message":{"role":"user","content":"x"}}`,
		`{"type":"message","id":"dup","parentId":"a4","timestamp":"2026-03-01T10:00:04.000Z","id":"a5","message":{"role":"user","content":"x"}}`,
		`{"type":"message","id":"a6","parentId":"a5","timestamp":"2026-03-01T10:00:05.000Z","message":{"role":"user","content":"y"}}`,
	)
	before, err := st.Path(ctx, "a6")
	if err != nil {
		t.Fatal(err)
	}
	marks := func() map[string]bool {
		t.Helper()
		rows, err := rawDB(t, path).QueryContext(ctx, `SELECT id, canonical IS NOT NULL FROM entries ORDER BY pk`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]bool{}
		for rows.Next() {
			var id string
			var marked bool
			if err := rows.Scan(&id, &marked); err != nil {
				t.Fatal(err)
			}
			m[id] = marked
		}
		return m
	}
	want := marks()
	if !want["a1"] || want["a3"] || want["a5"] {
		t.Fatalf("marks after append = %v; want a1 marked, a3 and a5 not", want)
	}
	// a4 (an escape json_quote does not write) stays unmarked: decoded.
	want["a4"] = false
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	for _, stmt := range []string{
		`DROP TRIGGER entries_no_update`,
		`UPDATE entries SET canonical = NULL`,
		`CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
BEGIN
    SELECT RAISE(ABORT, 'entries are append-only: UPDATE refused');
END`,
		`DELETE FROM schema_migrations WHERE version = 16`,
	} {
		if _, err := raw.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	db = openDB(t, path, engine.Options{})
	if got := marks(); !cmp.Equal(got, want) {
		t.Errorf("marks after migration 16 = %v; want %v", got, want)
	}
	st, err = db.OpenSession(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	after, err := st.Path(ctx, "a6")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("Path after migration 16 (-before +after):\n%s", diff)
	}
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check after migration 16: %v", err)
	}
}

// TestPathOffTheBranchCutsAsOnIt reads the path of an entry below a
// compaction without a firstKeptEntryId (pi's appendCompaction writes
// what it is given, an imported file may hold one) or whose JSON names a
// member twice (a hand-edited or concatenated line; pi's JSON.parse takes
// the last), on the active branch and, after the leaf moved away, off it:
// both reads must cut where the tree rules cut (sessiontree.WalkPath, the
// memory and jsonl backends' reading), the last member winning.
func TestPathOffTheBranchCutsAsOnIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct{ members, want string }{
		{`"tokensBefore":1`, "a b c X d"}, // no firstKeptEntryId: nothing kept, no cut
		{`"firstKeptEntryId":null`, "a b c X d"},
		{`"firstKeptEntryId":"a","firstKeptEntryId":"c"`, "c X d"},
		{`"firstKeptEntryId":"c","firstKeptEntryId":"a"`, "a b c X d"},
		{`"firstKeptEntryId":"c","retainedTail":null,"retainedTail":[]`, "X d"},
		{`"firstKeptEntryId":"c","retainedTail":[],"retainedTail":null`, "c X d"},
	} {
		st := newSession(t, newDB(t))
		es := appendLines(t, st,
			`{"type":"message","id":"a","parentId":null,"timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":"a"}}`,
			`{"type":"message","id":"b","parentId":"a","timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"b"}}`,
			`{"type":"message","id":"c","parentId":"b","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"user","content":"c"}}`,
			`{"type":"compaction","id":"X","parentId":"c","timestamp":"2026-03-01T10:00:03.000Z","summary":"s",`+tc.members+`}`,
			`{"type":"message","id":"d","parentId":"X","timestamp":"2026-03-01T10:00:04.000Z","message":{"role":"user","content":"d"}}`,
		)
		want := strings.Fields(tc.want)
		byID := map[string]sessiontree.Entry{}
		for _, e := range es {
			byID[e.ID] = e
		}
		walked, err := sessiontree.WalkPath(ctx, "d", false, len(es), func(id string) (sessiontree.Entry, bool) { e, ok := byID[id]; return e, ok })
		if err != nil || !cmp.Equal(idsOf(walked), want) {
			t.Fatalf("%s: WalkPath(d) = %v, %v; want %v", tc.members, idsOf(walked), err, want)
		}
		for _, leaf := range []string{"d", "a"} { // d: on the branch; a: d off it
			if _, err := st.SetLeaf(ctx, leaf, sessiontree.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := st.Path(ctx, "d")
			if err != nil || !cmp.Equal(idsOf(got), want) {
				t.Errorf("%s, leaf %s: Path(d) = %v, %v; want %v", tc.members, leaf, idsOf(got), err, want)
			}
		}
	}
}

// TestPathOffTheBranchRefusesDamagedRows reads the path of an entry off
// the active branch whose ancestors' rows are damaged: a parent gone, a
// depth that does not follow the parent ids. The walk ends where the
// stored depths say the path starts, so it must check them on the way
// rather than end early and hand out a short path.
func TestPathOffTheBranchRefusesDamagedRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, queries := range [][]string{
		{`DROP TRIGGER entries_no_delete`, `DELETE FROM entries WHERE id = 'a0001'`},
		{`DROP TRIGGER entries_no_update`, `UPDATE entries SET depth = 1 WHERE id = 'a0002'`},
		{`DROP TRIGGER entries_no_update`, `UPDATE entries SET depth = 9 WHERE id = 'a0002'`},
		{`DROP TRIGGER entries_no_update`, `UPDATE entries SET parent_id = NULL WHERE id = 'a0002'`},
		{`DROP TRIGGER entries_no_delete`, `DROP TRIGGER entries_no_update`,
			`DELETE FROM entries WHERE id = 'a0001'`, `UPDATE entries SET depth = 1 WHERE id = 'a0002'`},
	} {
		db := openDamaged(t)
		st := newSession(t, db)
		appendChains(t, st, batchChain(t, "a", "", 5))
		if _, err := st.SetLeaf(ctx, "a0000", sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		damage(t, db, queries...)
		for _, full := range []bool{false, true} {
			read := st.Path
			if full {
				read = st.FullPath
			}
			if p, err := read(ctx, "a0004"); !errors.Is(err, sessiontree.ErrCorrupt) {
				t.Errorf("after %q, path(a0004, full %v) = %v, %v; want %v", queries, full, idsOf(p), err, sessiontree.ErrCorrupt)
			}
		}
	}
}

// appendLines appends the entries of JSON lines to st in one batch and
// returns them.
func appendLines(t *testing.T, st *engine.Storage, lines ...string) []sessiontree.Entry {
	t.Helper()
	var es []sessiontree.Entry
	for _, l := range lines {
		e, err := sessiontree.DecodeEntry([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	if err := st.AppendBatch(context.Background(), es); err != nil {
		t.Fatal(err)
	}
	return es
}

// TestPathRefusesDamagedPlace reads paths from entries whose stored depth
// or start depth a damage changed, on the active branch (the branch
// damaged to match) and off it: each read reports the session corrupt.
// A start depth past the entry's depth panicked (a slice of negative
// capacity); a huge depth read as many branch rows.
func TestPathRefusesDamagedPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, query := range []string{
		`UPDATE entries SET start_depth = 99 WHERE id = 'a0002'`,
		`UPDATE entries SET start_depth = 0 WHERE id = 'a0002'`,
		`UPDATE entries SET depth = 1 << 40 WHERE id = 'a0002'`,
	} {
		db := openDamaged(t)
		st := newSession(t, db)
		appendChains(t, st, batchChain(t, "a", "", 5), batchChain(t, "b", "a0000", 1))
		if _, err := st.SetLeaf(ctx, "a0004", sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		damage(t, db, `DROP TRIGGER entries_no_update`, query,
			`UPDATE branch SET depth = 1 << 40 WHERE depth = 3 AND (SELECT depth FROM entries WHERE id = 'a0002') = 1 << 40`)
		for _, leaf := range []string{"", "b0000"} { // a0002 on the branch, then off it
			if leaf != "" {
				if _, err := st.SetLeaf(ctx, leaf, sessiontree.AppendOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if p, err := st.Path(ctx, "a0002"); !errors.Is(err, sessiontree.ErrCorrupt) {
				t.Errorf("after %q, leaf %s: Path(a0002) = %v, %v; want %v", query, leaf, idsOf(p), err, sessiontree.ErrCorrupt)
			}
		}
	}
}

// damage runs SQL statements on db's file behind the engine's back.
func damage(t *testing.T, db *engine.DB, queries ...string) {
	t.Helper()
	raw := rawDB(t, db.Path())
	for _, q := range queries {
		if _, err := raw.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
}

// appendChains appends each chain (batchChain) in a batch of its own.
func appendChains(t *testing.T, st *engine.Storage, chains ...[]sessiontree.Entry) {
	t.Helper()
	for _, c := range chains {
		if err := st.AppendBatch(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStateRefusesDamagedPointers damages the pointer an entry holds to
// the latest thinking-level entry on its path: to another session's, to
// no row, to an entry that sets no thinking level, to a later entry. The
// state at it must be reported corrupt, not read from whatever the
// pointer names (another session's level, or the default).
func TestStateRefusesDamagedPointers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	thinking := func(id, parent, level string) string {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"thinking_level_change","id":"` + id + `","parentId":` + p +
			`,"timestamp":"2026-03-01T10:00:00.000Z","thinkingLevel":"` + level + `"}`
	}
	msg := `{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"x"}}`
	for _, ptr := range []string{
		`(SELECT pk FROM entries WHERE id = 'a1')`,
		`pk + 1000`,
		`pk`,
		`pk + 1`,
	} {
		db := openDamaged(t)
		other, st := newSession(t, db), newSession(t, db)
		appendLines(t, other, thinking("a1", "", "high"))
		appendLines(t, st, thinking("b1", "", "low"), msg,
			`{"type":"message","id":"b3","parentId":"b2","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"user","content":"y"}}`)
		if got, err := st.State(ctx, "b2"); err != nil || got.ThinkingLevel != "low" {
			t.Fatalf("before the damage, State(b2) = %+v, %v; want low", got, err)
		}
		damage(t, db, `DROP TRIGGER entries_no_update`, `UPDATE entries SET thinking_pk = `+ptr+` WHERE id = 'b2'`)
		if got, err := st.State(ctx, "b2"); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("thinking_pk = %s: State(b2) = %+v, %v; want %v", ptr, got, err, sessiontree.ErrCorrupt)
		}
	}
}
