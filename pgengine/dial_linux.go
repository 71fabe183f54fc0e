package pgengine

import (
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userTimeoutControl is a dialer's Control that sets the socket's
// TCP_USER_TIMEOUT to d (0: the system's, no bound), before it connects.
// A Unix socket (a server on the same machine) has no TCP to bound.
func userTimeoutControl(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(network, _ string, c syscall.RawConn) error {
		if !strings.HasPrefix(network, "tcp") {
			return nil // a Unix socket: no TCP to bound
		}
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
