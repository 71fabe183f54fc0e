package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// TestReadOnlyReaderDuringWrites: a process that may not write the
// database (here: it reaches the folder through a read-only mount of it)
// opens it while another appends to it, and reads on: it opens read-only,
// through the -shm file the writer keeps (engine's readShared), and each
// of its reads sees a whole snapshot no older than what the writer had
// acknowledged before the read began: one unbroken chain, every
// acknowledged entry; its check of the session passes and its search
// finds an entry acknowledged before it. (It does not see writers that
// open the file after it, when it opened the file alone: engine's
// readonly.go caveat.)
func TestReadOnlyReaderDuringWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, dst := t.TempDir(), t.TempDir()
	if err := bindReadOnly(src, dst); err != nil {
		t.Skipf("a read-only mount of the folder: %v", err)
	}
	t.Cleanup(func() { unmount(dst) })
	w := openStore(t, filepath.Join(src, "sessions.db"), store.Options{})
	st, err := w.Create(ctx, store.CreateOptions{Cwd: "/work/ro"})
	if err != nil {
		t.Fatal(err)
	}
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	var acked atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop.Store(true)
	wg.Go(func() {
		text := strings.Repeat("read-only reader ", 100)
		for i := 0; !stop.Load(); i++ {
			if _, err := sess.AppendMessage(ctx, userMessage(fmt.Sprintf("zqro%dzq %s", i, text))); err != nil {
				t.Error(err)
				return
			}
			acked.Add(1)
		}
	})
	for acked.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	r, err := store.Open(ctx, filepath.Join(dst, "sessions.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !errors.Is(r.DB().ReadOnly(), sessiontree.ErrReadOnly) {
		t.Fatalf("opened through a read-only mount: ReadOnly() = %v; want ErrReadOnly", r.DB().ReadOnly())
	}
	reads := 0
	for deadline := time.Now().Add(pick(time.Second, 3*time.Second, 20*time.Second)); time.Now().Before(deadline); reads++ {
		before := acked.Load()
		rs, err := r.OpenSession(ctx, st.ID())
		if err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		log := logOf(t, rs)
		if int64(len(log)) < before {
			t.Fatalf("read %d holds %d entries; %d were acknowledged before it began", reads, len(log), before)
		}
		for i, e := range log {
			if i > 0 && e.ParentID != log[i-1].ID {
				t.Fatalf("read %d: entry %d (%s) has parent %s; want %s", reads, i+1, e.ID, e.ParentID, log[i-1].ID)
			}
		}
	}
	if err := r.Check(ctx, st.ID()); err != nil {
		t.Errorf("check through the read-only mount while another writes: %v", err)
	}
	m := fmt.Sprintf("zqro%dzq", acked.Load()-1)
	if res, err := r.Search(ctx, m, store.SearchOptions{SessionID: st.ID(), Literal: true}); err != nil || len(res.Hits) != 1 {
		t.Errorf("search %s through the read-only mount = %+v, %v; want its entry", m, res.Hits, err)
	}
	t.Logf("%d reads while %d entries were appended", reads, acked.Load())
}
