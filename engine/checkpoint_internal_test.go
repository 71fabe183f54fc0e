package engine

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// TestCheckpointerConnectsOnFirstCheckpoint checks that opening a
// database starts no checkpoint (the checkpointer's connection opens at
// its first wake-up), and that once the write connection has written a
// checkpoint's worth of pages the checkpointer still copies the log into
// the database file, without a Close.
func TestCheckpointerConnectsOnFirstCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openGroupDB(t)
	st := groupSession(t, db)
	path := db.Path()
	size := func() int64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	// About 1.5 checkpoints' worth of pages, in appends of 64 KiB.
	text := strings.Repeat("x", 64<<10)
	drafts := make([]sessiontree.Draft, 8)
	for i := range drafts {
		drafts[i] = userDraft(text)
	}
	for written := 0; written < checkpointPages*3/2*pageSize; written += len(drafts) * len(text) {
		if _, err := st.AppendAll(ctx, drafts, sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The checkpoint runs in the background: wait for it, bounded.
	for deadline := time.Now().Add(30 * time.Second); size() <= before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("database file still %d bytes after writing %d pages: no checkpoint ran", size(), checkpointPages*3/2)
		}
	}
}
