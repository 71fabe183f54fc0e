package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestRepairOlderWrites leaves one session's derived values as an older
// engine wrote them before the schema fence (the tree's counts without
// the new branch, the usage of a time Go read and JavaScript does not on
// the day Go gave, the name by another rule, no labels, the materialized
// branch a row short) and damages another's entry as well as its counts.
// Check calls both corrupt; Repair mends the first, whose rows are then
// what the engine wrote (its entries byte for byte as they were), and
// Check passes it; the second is reported, naming it, and none of its
// rows changes. A third, sound, is neither repaired nor changed, and an
// append to the repaired session keeps Check clean.
func TestRepairOlderWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDamaged(t)
	older, broken, sound := repairSession(t, db), repairSession(t, db), repairSession(t, db)
	raw := rawDB(t, db.Path())
	written := sessionRows(t, raw, older.ID())
	oldRules(t, raw, older.ID(), broken.ID())
	mustExec(t, raw, `DROP TRIGGER entries_no_update`,
		`UPDATE entries SET checksum = checksum + 1 WHERE seq = 2 AND session = (SELECT pk FROM sessions WHERE id = '`+broken.ID()+`')`)
	for _, st := range []*engine.Storage{older, broken} {
		if err := db.Check(ctx, st.ID()); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Fatalf("Check(%s) as an older engine left it = %v; want ErrCorrupt", st.ID(), err)
		}
	}
	brokenRows, soundRows := sessionRows(t, raw, broken.ID()), sessionRows(t, raw, sound.ID())

	repaired, err := db.Repair(ctx, "")
	if len(repaired) != 1 || repaired[0].ID != older.ID() || !errors.Is(repaired[0].Was, sessiontree.ErrCorrupt) {
		t.Errorf("Repair() repaired %+v; want %s alone, with what Check reported", repaired, older.ID())
	}
	if !errors.Is(err, sessiontree.ErrCorrupt) || !strings.Contains(err.Error(), broken.ID()) || strings.Contains(err.Error(), sound.ID()) {
		t.Errorf("Repair() = %v; want ErrCorrupt naming %s, whose entry is damaged, alone", err, broken.ID())
	}
	if diff := cmp.Diff(written, sessionRows(t, raw, older.ID())); diff != "" {
		t.Errorf("repaired session's rows (-written +repaired):\n%s", diff)
	}
	for name, want := range map[string]map[string][]string{broken.ID(): brokenRows, sound.ID(): soundRows} {
		if diff := cmp.Diff(want, sessionRows(t, raw, name)); diff != "" {
			t.Errorf("rows of session %s changed by Repair (-before +after):\n%s", name, diff)
		}
	}
	if _, err := older.Append(ctx, userDraft("after"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{older.ID(), sound.ID()} {
		if err := db.Check(ctx, id); err != nil {
			t.Errorf("Check(%s) after Repair = %v", id, err)
		}
	}
	if repaired, err := db.Repair(ctx, older.ID()); len(repaired) != 0 || err != nil {
		t.Errorf("Repair(%s) of a sound session = %+v, %v; want nothing done", older.ID(), repaired, err)
	}
	if _, err := db.Repair(ctx, "no-such-session"); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Repair() of a session that does not exist = %v; want ErrNotFound", err)
	}
}

// repairSession makes a session of five entries: a user message, two
// replies to it with usage (two branches; the second's time one that Go
// read and JavaScript does not, so on the unknown day), a label and a
// name.
func repairSession(t *testing.T, db *engine.DB) *engine.Storage {
	t.Helper()
	st := newSession(t, db)
	build := func(typ sessiontree.EntryType, id, parent, fields string) sessiontree.Entry {
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: typ, Fields: []byte(fields)}, id, parent, "2026-03-01T11:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	log := []sessiontree.Entry{
		build(sessiontree.TypeMessage, "e1", "", `{"message":`+string(userMsg("one"))+`}`),
		usageEntry(t, "e2", "e1", "2026-02-28T09:30:00.000Z", "m", 5, 0.1),
		usageEntry(t, "e3", "e1", "2026-03-01T10:00:00,5Z", "m", 7, 0.2),
		build(sessiontree.TypeLabel, "e4", "e3", `{"targetId":"e2","label":"kept"}`),
		build(sessiontree.TypeSessionInfo, "e5", "e4", `{"name":"older"}`),
	}
	if err := st.AppendBatch(context.Background(), log); err != nil {
		t.Fatal(err)
	}
	return st
}

// oldRules rewrites the derived values of sessions ids as an older
// engine left them.
func oldRules(t *testing.T, raw *sql.DB, ids ...string) {
	t.Helper()
	for _, id := range ids {
		pk := `(SELECT pk FROM sessions WHERE id = '` + id + `')`
		mustExec(t, raw,
			`UPDATE sessions SET branch_count = branch_count - 1, name = ' older ' WHERE pk = `+pk,
			`UPDATE usage_days SET day = '2026-03-01' WHERE day = '' AND session = `+pk,
			`DELETE FROM labels WHERE session = `+pk,
			`DELETE FROM branch WHERE session = `+pk+` AND depth = (SELECT max(depth) FROM branch WHERE session = `+pk+`)`)
	}
}

func mustExec(t *testing.T, raw *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// sessionRows reads every row session id has in the tables a repair may
// write and in entries, each a line of its columns.
func sessionRows(t *testing.T, raw *sql.DB, id string) map[string][]string {
	t.Helper()
	var pk int64
	if err := raw.QueryRow(`SELECT pk FROM sessions WHERE id = ?`, id).Scan(&pk); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for table, query := range map[string]string{
		"sessions":   `SELECT * FROM sessions WHERE pk = ?`,
		"entries":    `SELECT pk, session, seq, id, parent_id, parent_pk, type, timestamp, depth, start_depth, thinking_pk, model_pk, tools_pk, target_id, custom_type, role, CAST(raw AS BLOB), canonical, checksum FROM entries WHERE session = ? ORDER BY pk`,
		"labels":     `SELECT * FROM labels WHERE session = ? ORDER BY target_id`,
		"usage_days": `SELECT * FROM usage_days WHERE session = ? ORDER BY day, bucket`,
		"branch":     `SELECT * FROM branch WHERE session = ? ORDER BY depth`,
		"pending":    `SELECT * FROM search_pending WHERE session = ?`,
	} {
		out[table] = queryLines(t, raw, query, pk)
	}
	return out
}

// queryLines runs query and returns each row's columns as a line.
func queryLines(t *testing.T, raw *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := raw.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var line strings.Builder
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			fmt.Fprintf(&line, "%s=%v ", cols[i], v)
		}
		out = append(out, line.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRepairWritesWhatTheWritesWrote wrecks every derived value of a
// session of every kind of write (appends, leaf moves to an entry and
// before the first, a batch, a compaction, branches, roots, labels set
// and cleared, a name, a model change, usage on two days) and of an
// empty one: Repair writes back, row for row, what the writes had
// written.
func TestRepairWritesWhatTheWritesWrote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	st, empty := newSession(t, db), newSession(t, db)
	none := sessiontree.AppendOptions{}
	must := must2[sessiontree.Entry](t)
	draft := func(typ sessiontree.EntryType, fields string) sessiontree.Draft {
		return sessiontree.Draft{Type: typ, Fields: []byte(fields)}
	}
	a := must(st.Append(ctx, userDraft("a"), none)).ID
	b := must(st.Append(ctx, draft(sessiontree.TypeModelChange, `{"provider":"p","modelId":"m"}`), none)).ID
	must(st.SetLeaf(ctx, a, none))
	must(st.Append(ctx, draft(sessiontree.TypeCompaction, `{"summary":"s","firstKeptEntryId":"`+a+`","tokensBefore":1}`), none))
	must(st.Append(ctx, draft(sessiontree.TypeLabel, `{"targetId":"`+b+`","label":"one"}`), none))
	must(st.Append(ctx, draft(sessiontree.TypeLabel, `{"targetId":"`+a+`","label":"two"}`), none))
	must(st.Append(ctx, draft(sessiontree.TypeLabel, `{"targetId":"`+b+`"}`), none))
	move := must(st.SetLeaf(ctx, "", none)).ID
	must(st.Append(ctx, userDraft("another root"), none))
	must(st.Append(ctx, draft(sessiontree.TypeSessionInfo, `{"name":" named "}`), none))
	if err := st.AppendBatch(ctx, []sessiontree.Entry{
		usageEntry(t, "u1", move, "2026-03-01T10:00:00.000Z", "m", 5, 0.1),
		usageEntry(t, "u2", "u1", "2026-03-02T10:00:00.000Z", "m", 7, 0.2),
		usageEntry(t, "u3", "u1", "2026-03-02T11:00:00.000Z", "n", 9, 0.3),
	}); err != nil {
		t.Fatal(err)
	}
	must(st.Append(ctx, userDraft("last"), none))
	raw := rawDB(t, db.Path())
	written := map[string]map[string][]string{}
	for _, s := range []*engine.Storage{st, empty} {
		written[s.ID()] = sessionRows(t, raw, s.ID())
	}
	mustExec(t, raw, `UPDATE sessions SET message_count = 0, user_messages = 0, assistant_messages = 0,
		tool_results = 0, tool_calls = 0, input_tokens = 0, output_tokens = 0, cache_read_tokens = 0,
		cache_write_tokens = 0, cost = 0, usage_buckets = '[]', name = NULL, first_user_text = 'x',
		branch_count = 7, root_count = 7, compaction_count = 7, label_count = 7,
		leaf_pk = NULL, leaf_id = NULL, leaf_depth = 0, boundary_depth = 0`,
		`DELETE FROM labels`, `DELETE FROM usage_days`, `DELETE FROM branch`)

	repaired, err := db.Repair(ctx, "")
	if err != nil || len(repaired) != 2 {
		t.Errorf("Repair() = %+v, %v; want both sessions repaired", repaired, err)
	}
	for id, want := range written {
		if diff := cmp.Diff(want, sessionRows(t, raw, id)); diff != "" {
			t.Errorf("rows of session %s (-written +repaired):\n%s", id, diff)
		}
	}
}
