package store_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// failingRead reads f and fails every read that reaches past from with
// EIO, as a failing disk does part way through a file.
type failingRead struct {
	f    *os.File
	from int64
}

// ReadAt reads up to from and fails beyond.
func (r failingRead) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) <= r.from {
		return r.f.ReadAt(p, off)
	}
	n := 0
	if off < r.from {
		n, _ = r.f.ReadAt(p[:r.from-off], off)
	}
	return n, syscall.EIO
}

// failReadsOf returns opts making the reads of the file at path fail
// from half of it on, in the walks over its new part numbered in walks
// (1: the first), or in every walk when walks is empty. A large file's import walks it three times: a
// one-pass read that gives way at its first chunk, the pass that checks
// it, the pass that commits it.
func failReadsOf(t *testing.T, opts store.ImportOptions, path string, walks ...int) store.ImportOptions {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	return store.WithReadFile(opts, func(f *os.File) io.ReaderAt {
		if f.Name() != path {
			return f
		}
		mu.Lock()
		defer mu.Unlock()
		if n++; len(walks) == 0 || slices.Contains(walks, n) {
			return failingRead{f, fi.Size() / 2}
		}
		return f
	})
}

// TestImportReadFails: a file whose read fails part way (EIO from half
// of it on) is reported failed, with the error naming it and matching
// ErrStorage and the system's EIO, while the files beside it are
// imported. What of it is committed is whole: nothing when the file was
// to be committed in one transaction or the failure came in the pass
// that checks it first, whole chunks when it came while a large file
// was committed chunk by chunk; the store checks clean (openStore's
// cleanup). The next import, reading without failure, brings the rest,
// and the session holds the file's entries, each once.
func TestImportReadFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		big    bool  // the file is larger than a read's buffer, imported in chunks of 10 entries (two passes)
		walks  []int // the walks of the file whose reads fail (see failReadsOf): nil for all
		chunks bool  // whole chunks are committed before the failure
	}{
		{"one pass", false, nil, false},
		{"two passes, the check", true, []int{2}, false},
		{"two passes, the commit", true, []int{3}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			dir := t.TempDir()
			var paths []string
			for i, name := range []string{"a", "b", "c"} {
				path := filepath.Join(dir, name+".jsonl")
				n, scale := 60, 0.1
				if tc.big && name == "b" {
					n, scale = 400, 1
				}
				writePiFile(t, newPiGen(uint64(i+1)), path, "/home/dev/"+name, n, scale)
				paths = append(paths, path)
			}
			bad, want := paths[1], readIDs(t, paths[1])
			opts := store.ImportOptions{}
			if tc.big {
				opts = store.WithImportChunk(opts, 10)
			}
			rep := mustImport(t, s, paths, failReadsOf(t, opts, bad, tc.walks...))
			var committed int
			var session string
			for _, f := range rep.Files {
				switch {
				case f.Path != bad:
					if f.Outcome != store.OutcomeNew || f.Err != nil {
						t.Errorf("%s beside the failing file: %s, %v; want new", f.Path, f.Outcome, f.Err)
					}
				case f.Outcome != store.OutcomeFailed || !errors.Is(f.Err, syscall.EIO) || !errors.Is(f.Err, sessiontree.ErrStorage) || !strings.Contains(f.Err.Error(), bad):
					t.Fatalf("the file whose reads fail: %s, %v; want failed, naming it, with EIO and ErrStorage", f.Outcome, f.Err)
				default:
					committed, session = f.Entries, f.SessionID
				}
			}
			if tc.chunks != (committed > 0) || committed%10 != 0 || committed >= len(want) {
				t.Errorf("the failed import committed %d of %d entries; want none, or whole chunks of 10 when the commit failed", committed, len(want))
			}
			if n, wantN := countSessions(t, s), 2+min(committed, 1); n != wantN {
				t.Errorf("%d sessions after the failed read; want %d", n, wantN)
			}
			if committed > 0 {
				checkSessionIDs(t, s, session, want[:committed])
			}
			again := mustImport(t, s, paths, opts)
			var f store.FileResult
			for _, r := range again.Files {
				if r.Path == bad {
					f = r
				} else if r.Outcome != store.OutcomeUnchanged {
					t.Errorf("%s imported again: %s; want unchanged", r.Path, r.Outcome)
				}
			}
			wantOutcome := map[bool]store.Outcome{false: store.OutcomeNew, true: store.OutcomeGrown}[committed > 0]
			if f.Outcome != wantOutcome || f.Err != nil || f.Entries != len(want)-committed {
				t.Fatalf("the import after the failure: %s, %d entries, %v; want %s with %d", f.Outcome, f.Entries, f.Err, wantOutcome, len(want)-committed)
			}
			checkSessionIDs(t, s, f.SessionID, want)
		})
	}
}
