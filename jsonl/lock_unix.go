//go:build unix

package jsonl

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sessiontree/sessiontree"
)

// lockFile takes an exclusive, non-blocking flock on f. flock locks belong
// to the open file description, so a second open of the same file in the
// same process conflicts too, and the lock goes away when f is closed or
// the process dies.
//
// A lock found taken is tried again for lockGrace before it counts as
// another writer's: a process that starts a program (os/exec forks, then
// execs) holds a copy of every open descriptor for that moment, so a
// file this process just closed can still look locked by the child.
func lockFile(f *os.File) error {
	deadline := time.Now().Add(lockGrace)
	for {
		err := tryLock(f)
		if !errors.Is(err, sessiontree.ErrLocked) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(lockRetry)
	}
}

// lockGrace and lockRetry bound how long and how often lockFile tries a
// taken lock again.
const (
	lockGrace = 100 * time.Millisecond
	lockRetry = 5 * time.Millisecond
)

// tryLock takes the flock on f once.
func tryLock(f *os.File) error {
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
// check it every time. linked is false once no path names the file any
// more (it was deleted, or another file renamed over it).
func fileSize(f *os.File) (size int64, linked bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var st unix.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil {
		return 0, false, err
	}
	return st.Size, st.Nlink > 0, serr
}
