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

// fileSize returns f's size.
func fileSize(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
