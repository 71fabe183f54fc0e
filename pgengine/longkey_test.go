package pgengine_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestLongKeysAreInvalid: an id or working directory longer than a
// PostgreSQL index takes (a SQLite database takes it) is refused as
// invalid input naming what is too long, not as a storage failure (the
// server's "index row size exceeds btree maximum", which a caller would
// try again), and nothing is stored.
func TestLongKeysAreInvalid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	// 4,000 bytes the server cannot compress under its index's limit.
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < 4000 {
		b.WriteByte("0123456789abcdefghijklmnopqrstuvwxyz"[rng.IntN(36)])
	}
	long := b.String()
	for _, meta := range []sessiontree.SessionMeta{{ID: long, Cwd: "/x"}, {Cwd: "/" + long}} {
		_, err := db.CreateSession(ctx, meta)
		var ie *sessiontree.InvalidSessionMetaError
		if !errors.Is(err, sessiontree.ErrInvalidEntry) || errors.Is(err, sessiontree.ErrStorage) || !errors.As(err, &ie) {
			t.Errorf("CreateSession(a %d-byte id, a %d-byte cwd) = %v; want an InvalidSessionMetaError", len(meta.ID), len(meta.Cwd), err)
		}
	}
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	first := build(t, userDraft("one"), "a1", "")
	if err := st.AppendBatch(ctx, []sessiontree.Entry{first}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []sessiontree.Entry{build(t, userDraft("two"), long, "a1"), build(t, userDraft("three"), "a2", long)} {
		err := st.AppendBatch(ctx, []sessiontree.Entry{e})
		if !errors.Is(err, sessiontree.ErrInvalidEntry) || errors.Is(err, sessiontree.ErrStorage) {
			t.Errorf("AppendBatch(an id of %d bytes, a parent of %d) = %.200v; want ErrInvalidEntry", len(e.ID), len(e.ParentID), err)
		}
		if checkErr := db.CheckEntry(e); !errors.Is(checkErr, sessiontree.ErrInvalidEntry) {
			t.Errorf("CheckEntry(an id of %d bytes, a parent of %d) = %.200v; want ErrInvalidEntry", len(e.ID), len(e.ParentID), checkErr)
		}
	}
	d := userDraft("four")
	d.ID = long
	if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrInvalidEntry) || errors.Is(err, sessiontree.ErrStorage) {
		t.Errorf("Append(a draft with a %d-byte id) = %.200v; want ErrInvalidEntry", len(d.ID), err)
	}
	if n, err := st.Stats(ctx); err != nil || n.Entries != 1 {
		t.Errorf("Stats = %+v, %v; want the one entry stored before", n, err)
	}
}
