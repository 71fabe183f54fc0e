//go:build unix

package pgengine

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// closedByServer reports whether the server's end of the idle connection
// c was closed (an end of stream or a reset waits to be read), without
// reading or waiting: one recv that peeks, on the socket Go keeps
// non-blocking, which a read under way elsewhere does not hold up. A connection with nothing to read, or whose socket
// cannot be reached, is taken for open.
func closedByServer(c net.Conn) bool {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn() // TLS: the end of stream is the socket's
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	// Control, not Read: pgx's background reader may still sit in a read
	// of the socket, whose lock Read would wait for (until a reply to
	// the batch not yet sent).
	closed := false
	err = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK)
		closed = (n == 0 && err == nil) || (err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR))
	})
	return closed || err != nil
}
