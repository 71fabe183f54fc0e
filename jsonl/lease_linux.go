package jsonl

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// holdOpens takes a write lease on f, which this process has open for
// writing: until release is called, another process's open of the file
// waits (the kernel breaks the lease, and waits for its release), so no
// writer that opens the file to append, as pi does for every entry, can
// write to it meanwhile. The lease is granted only while no other open
// file description has the file: one found open is tried again for
// leaseGrace (pi holds it open only for the moment of an append). held
// says whether the lease was taken; without it (the file kept open
// elsewhere, a file system or an owner that allows no lease) release
// does nothing.
func holdOpens(f *os.File) (release func(), held bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return func() {}, false
	}
	deadline := time.Now().Add(leaseGrace)
	for {
		var lerr error
		if err := rc.Control(func(fd uintptr) { _, lerr = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_WRLCK) }); err != nil {
			return func() {}, false
		}
		switch {
		case lerr == nil:
			return func() {
				_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_UNLCK) })
			}, true
		case lerr != unix.EAGAIN && lerr != unix.EINTR || time.Now().After(deadline):
			return func() {}, false
		}
		time.Sleep(lockRetry)
	}
}

// leaseGrace bounds how long holdOpens waits for other opens of the file
// to end.
const leaseGrace = 100 * time.Millisecond
