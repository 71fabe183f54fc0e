//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/store"
)

func TestReadCommandsMapTheDatabase(t *testing.T) {
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{[]string{"context", "0198f2a4", "--json"}, mmapSize},
		{[]string{"info", "0198f2a4"}, mmapSize},
		{[]string{"ls"}, mmapSize},
		{[]string{"name", "0198f2a4", "renamed"}, 0},
		{[]string{"search", "cursor"}, 0},
	} {
		ok(t, append([]string{"--db", db}, tc.args...)...)
		sharedStores.mu.Lock()
		got := sharedStores.asked[db].Engine.MmapSize
		sharedStores.mu.Unlock()
		if got != tc.want {
			t.Errorf("sessiontree %s opened the store with MmapSize %d; want %d", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// A database cut short beneath a mapped reader faults in SQLite's own
// code, in the middle of a read; the fault is the read's error.
func TestMappedReadOfACutFile(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "sessions.db")
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	var lines strings.Builder
	for range 200 {
		fmt.Fprintf(&lines, `{"type":"custom","customType":"step","data":%q}`+"\n", strings.Repeat("x", 1000))
	}
	if r := runCmd(t, lines.String(), "--db", db, "append", "0198f2a4"); r.code != 0 {
		t.Fatalf("append: exit %d, %s", r.code, r.stderr)
	}
	sharedStores.close(t, db)
	// Left open: a store that faulted is not closed (see engine.FaultError).
	s, err := store.Open(ctx, db, store.Options{Engine: engine.Options{MmapSize: mmapSize}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Resolve(ctx, "0198f2a4")
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	err = engine.CatchFaults(func() error {
		return s.Database().View(ctx, func(tx sessiontree.DatabaseTx) error {
			return tx.RawEntries(id, func(sessiontree.RawEntry) error {
				if read++; read == 1 {
					return os.Truncate(db, 4096)
				}
				return nil
			})
		})
	})
	var fe *engine.FaultError
	if !errors.As(err, &fe) || !errors.Is(err, sessiontree.ErrStorage) {
		t.Fatalf("reading on after the file was cut (%d entries read): %v; want a *engine.FaultError", read, err)
	}
}
