//go:build !unix

package jsonl

import (
	"fmt"
	"os"
	"runtime"

	"github.com/sessiontree/sessiontree"
)

// lockFile fails: this build has no advisory file locks, and writing a
// session without one would give up the one-writer guarantee.
func lockFile(f *os.File) error {
	return fmt.Errorf("lock %s: %w: no advisory file locks on %s", f.Name(), sessiontree.ErrStorage, runtime.GOOS)
}

// syncDir is a no-op where directories cannot be synced.
func syncDir(dir string) error { return nil }

// fileSize returns f's size; linked is always true (this build writes
// no file: lockFile fails).
func fileSize(f *os.File) (size int64, linked bool, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	return fi.Size(), true, nil
}
