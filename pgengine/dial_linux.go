package pgengine

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userTimeoutControl is a dialer's Control that sets the socket's
// TCP_USER_TIMEOUT to d (0: the system's, no bound), before it connects.
func userTimeoutControl(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
		})
		if err != nil {
			return err
		}
		return serr
	}
}
