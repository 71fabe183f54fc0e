package pgengine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestReadsRefuseChangedJSON: every read that hands out entries verifies
// each entry's JSON against its checksum, as the SQLite engine's do, so
// an entry changed behind the engine's back (a restore, a hand edit, a
// disk) is a CorruptError naming it, not an answer: the log, one entry,
// entries by type, a path read from the branch and one read up through
// parent ids, and the state. The reads handed the changed JSON out.
func TestReadsRefuseChangedJSON(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, url := openDB(t)
	st := newSession(t, db)
	f, err := sessiontree.Fields("thinkingLevel", "high")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string // thinking change, a, b (left by the leaf move), c
	for _, d := range []sessiontree.Draft{{Type: sessiontree.TypeThinkingLevelChange, Fields: f}, userDraft("a"), userDraft("b")} {
		e, err := st.Append(ctx, d, sessiontree.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if _, err := st.SetLeaf(ctx, ids[1], sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := st.Append(ctx, userDraft("c"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	think, a, b := ids[0], ids[1], ids[2]
	reads := map[string]func() error{
		"Log":           func() error { _, err := st.Log(ctx, 0, 0); return err },
		"Entry":         func() error { _, err := st.Entry(ctx, think); return err },
		"EntriesByType": func() error { _, err := st.EntriesByType(ctx, sessiontree.TypeThinkingLevelChange); return err },
		"Path(c)":       func() error { _, err := st.FullPath(ctx, c.ID); return err },
		"Path(b)":       func() error { _, err := st.FullPath(ctx, b); return err },
		"State(c)":      func() error { _, err := st.State(ctx, c.ID); return err },
	}
	for name, read := range reads {
		if err := read(); err != nil {
			t.Fatalf("%s of a sound session: %v", name, err)
		}
	}
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		id    string
		reads []string
	}{
		{think, []string{"Log", "Entry", "EntriesByType", "Path(c)", "State(c)"}},
		{a, []string{"Log", "Path(c)", "Path(b)"}},
		{b, []string{"Log", "Path(b)"}},
	} {
		if _, err := conn.Exec(ctx, `UPDATE entries SET raw = raw || ' ' WHERE id = $1`, d.id); err != nil {
			t.Fatal(err)
		}
		for _, name := range d.reads {
			var ce *sessiontree.CorruptError
			if err := reads[name](); !errors.As(err, &ce) || ce.EntryID != d.id {
				t.Errorf("%s with entry %s changed = %v; want a CorruptError naming it", name, d.id, err)
			}
		}
		if _, err := conn.Exec(ctx, `UPDATE entries SET raw = rtrim(raw, ' ') WHERE id = $1`, d.id); err != nil {
			t.Fatal(err)
		}
	}
}
