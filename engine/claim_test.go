package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/childenv"
	"github.com/sessiontree/sessiontree/storetest"
)

// TestClaims runs the writer-claim suite, shared with the PostgreSQL
// engine, on SQLite: the other handle is a second DB on the file.
func TestClaims(t *testing.T) {
	t.Parallel()
	storetest.RunClaims(t, storetest.ClaimHarness{
		New: func(t testing.TB, now func() time.Time) (sessiontree.Storage, sessiontree.Storage) {
			path := filepath.Join(t.TempDir(), "s.db")
			emptyDB.CopyTo(t, path)
			st := newSession(t, openDB(t, path, engine.Options{Now: now}))
			other, err := openDB(t, path, engine.Options{Now: now}).OpenSession(context.Background(), st.ID())
			if err != nil {
				t.Fatal(err)
			}
			return st, other
		},
		Delete: func(ctx context.Context, st sessiontree.Storage, opts sessiontree.DeleteOptions) error {
			s := st.(*engine.Storage)
			return s.DB().DeleteSession(ctx, s.ID(), opts)
		},
		TxBatch: func(ctx context.Context, s sessiontree.Storage, entries []sessiontree.Entry) error {
			st := s.(*engine.Storage)
			return st.DB().Update(ctx, func(tx *engine.Tx) error { return tx.AppendBatch(st, entries) })
		},
	})
}

const claimChildEnv = "ENGINE_TEST_CLAIM_CHILD"

// TestClaimProcesses claims a session here and checks that another
// process is refused, naming the holder, both a claim and a plain write.
func TestClaimProcesses(t *testing.T) {
	t.Parallel()
	if os.Getenv(claimChildEnv) != "" {
		return // the child's work is in TestClaimChild
	}
	path := filepath.Join(t.TempDir(), "s.db")
	emptyDB.CopyTo(t, path)
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	a, err := st.Claim(context.Background(), "parent-agent", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestClaimChild$", "-test.count=1", "-test.v")
	cmd.Env = childenv.Env(fmt.Sprintf("%s=%s|%s", claimChildEnv, path, st.ID()))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if err := a.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestClaimChild is the child of TestClaimProcesses.
func TestClaimChild(t *testing.T) {
	spec := os.Getenv(claimChildEnv)
	if spec == "" {
		t.Skip("run by TestClaimProcesses")
	}
	path, id, _ := strings.Cut(spec, "|")
	ctx := context.Background()
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckClaimed(t, st, "parent-agent")
}
