//go:build !linux

package pgengine

import (
	"syscall"
	"time"
)

// userTimeoutControl is a dialer's Control that would bound
// unacknowledged data (TCP_USER_TIMEOUT, Linux's): none here, where the
// keepalives bound a connection the network stopped answering alone.
func userTimeoutControl(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
