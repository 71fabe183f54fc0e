package jsonl_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// TestCutKeepsAnotherWritersLine has a writer that ignores the lock (as
// pi does) append a line between the check of the file's size and the
// cut of a torn tail: the line must survive. The writer opens the file
// to append, as pi does for every entry; the lease held across the check
// and the cut makes its open wait until the cut is done, so its line
// lands after it, and the storage, which no longer knows the file's
// size, refuses its next write.
func TestCutKeepsAnotherWritersLine(t *testing.T) {
	probe := writeFile(t, "x")
	f, err := os.OpenFile(probe, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	leases := jsonl.Leases(f)
	f.Close()
	if !leases {
		t.Skip("no file leases here: the window between the check and the cut stays open (see the package doc)")
	}
	good := lines(testHeader, msg("aaaaaaaa", ""))
	path := writeFile(t, good+`{"type":"message","id":"bbbb`)
	st := open(t, path, jsonl.Options{})
	piLine := msg("cccccccc", "aaaaaaaa") + "\n"
	done := make(chan error, 1)
	defer jsonl.SetAfterSizeCheck(func() {
		go func() { done <- appendAsPi(path, piLine) }()
		select {
		case err := <-done:
			done <- err // wrote within the window: the cut will take it
		case <-time.After(300 * time.Millisecond):
		}
	})()
	appendUser(t, st, "after the crash")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); !strings.Contains(got, piLine) {
		t.Fatalf("file after the cut =\n%s\nwant the other writer's line %s", got, piLine)
	}
	_, err = sessiontree.NewSession(st, sessiontree.SessionOptions{}).AppendMessage(t.Context(), json.RawMessage(`{"role":"user","content":"next","timestamp":2}`))
	if !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("Append after another writer's line: %v; want ErrConflict", err)
	}
}

// appendAsPi appends line to the file at path as pi appends an entry:
// open, one write, close.
func appendAsPi(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestUpgradeKeepsAnotherWritersLine has a writer that ignores the lock
// append a line to a legacy file while Upgrade writes its new version:
// the rename would drop the line with the old file, so Upgrade must
// refuse, leaving the file as it is, the line in it.
func TestUpgradeKeepsAnotherWritersLine(t *testing.T) {
	path := copyFixture(t, "legacy-v2-hookmessage.jsonl")
	st := open(t, path, jsonl.Options{})
	piLine := `{"type":"message","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"late"}}` + "\n"
	defer jsonl.SetAfterRewrite(func() {
		if err := appendAsPi(path, piLine); err != nil {
			t.Error(err)
		}
	})()
	if err := st.Upgrade(t.Context()); !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("Upgrade with a line appended meanwhile: %v; want ErrConflict", err)
	}
	if got := readFile(t, path); !strings.HasSuffix(got, piLine) {
		t.Errorf("file after the upgrade ends %q; want the other writer's line", got[max(0, len(got)-200):])
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) != 0 {
		t.Errorf("files left beside it: %v", left)
	}
}
