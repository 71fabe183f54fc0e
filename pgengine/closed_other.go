//go:build !unix

package pgengine

import "net"

// closedByServer reports whether the server's end of the idle connection
// c was closed; here it cannot tell without reading, and says no: a
// batch sent on a connection the server closed is a commit whose
// outcome is unknown, as before.
func closedByServer(net.Conn) bool { return false }
