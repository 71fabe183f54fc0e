//go:build unix

package jsonl

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/sessiontree/sessiontree"
)

// lockFile takes an exclusive, non-blocking flock on f. flock locks belong
// to the open file description, so a second open of the same file in the
// same process conflicts too, and the lock goes away when f is closed or
// the process dies.
func lockFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("lock %s: %w: %w", f.Name(), sessiontree.ErrStorage, err)
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
			if ferr != unix.EINTR {
				return
			}
		}
	})
	if err == nil {
		err = ferr
	}
	switch err {
	case nil:
		return nil
	case unix.EWOULDBLOCK:
		return fmt.Errorf("lock %s: %w", f.Name(), sessiontree.ErrLocked)
	default:
		return fmt.Errorf("lock %s: %w: %w", f.Name(), sessiontree.ErrStorage, err)
	}
}

// syncDir makes a rename or a new file in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// fileSize returns f's size with one fstat and no allocation: appends
// check it every time.
func fileSize(f *os.File) (int64, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var st unix.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil {
		return 0, err
	}
	return st.Size, serr
}
