package pgengine

import (
	"context"
	"net"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// sockopts are the options a dialed socket is read back with.
type sockopts struct {
	userTimeoutMs, keepalive, idle, interval, count int
}

// dialedOpts dials a listener of its own with the dialer connConfig
// gives dbURL and reads back the socket's options, which the server is
// asked to give its side too (serverBounds: its settings of the same
// meaning; libpq's names are never sent).
func dialedOpts(t *testing.T, dbURL string) sockopts {
	t.Helper()
	cfg, err := connConfig(dbURL)
	if err != nil {
		t.Fatalf("connConfig(%q) = %v", dbURL, err)
	}
	for _, p := range []string{"keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count"} {
		if v, ok := cfg.RuntimeParams[p]; ok {
			t.Errorf("connConfig(%q) sends the server %s=%s; want it read by the dialer alone", dbURL, p, v)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := cfg.DialFunc(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var o sockopts
	var gerr error
	get := func(fd, level, opt int, to *int) {
		if gerr == nil {
			*to, gerr = unix.GetsockoptInt(fd, level, opt)
		}
	}
	if err := raw.Control(func(fd uintptr) {
		get(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, &o.userTimeoutMs)
		get(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE, &o.keepalive)
		get(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, &o.idle)
		get(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, &o.interval)
		get(int(fd), unix.IPPROTO_TCP, unix.TCP_KEEPCNT, &o.count)
	}); err != nil || gerr != nil {
		t.Fatalf("getsockopt: %v, %v", err, gerr)
	}
	server := sockopts{keepalive: o.keepalive}
	for _, p := range []struct {
		name string
		to   *int
	}{{"tcp_user_timeout", &server.userTimeoutMs}, {"tcp_keepalives_idle", &server.idle},
		{"tcp_keepalives_interval", &server.interval}, {"tcp_keepalives_count", &server.count}} {
		*p.to, _ = strconv.Atoi(cfg.RuntimeParams[p.name])
	}
	want := o
	if o.keepalive == 0 {
		want.idle, want.interval, want.count = 0, 0, 0 // the server keeps its own
	}
	if server != want {
		t.Errorf("connConfig(%q) asks the server for %+v; want %+v, the client's", dbURL, server, want)
	}
	return o
}

// TestDialBoundsSilentConnection: a connection the network stopped
// answering is bounded (TCP_USER_TIMEOUT and keepalives on every
// socket Open dials), and libpq's parameters override the bounds, read
// by the dialer rather than sent to the server. The proxy cannot show the
// bound at work (its kernel acknowledges what it takes), so the sockets'
// options are read back.
func TestDialBoundsSilentConnection(t *testing.T) {
	t.Parallel()
	const base = "postgres://u@127.0.0.1:5432/db"
	for _, tc := range []struct {
		query string
		want  sockopts
	}{
		{"", sockopts{30000, 1, 15, 5, 3}},
		{"?tcp_user_timeout=1234&keepalives_idle=7&keepalives_interval=2&keepalives_count=4", sockopts{1234, 1, 7, 2, 4}},
		{"?tcp_user_timeout=0&keepalives=0", sockopts{0, 0, 0, 0, 0}},
	} {
		got := dialedOpts(t, base+tc.query)
		if tc.want.keepalive == 0 {
			got.idle, got.interval, got.count = 0, 0, 0 // the system's, unused
		}
		if got != tc.want {
			t.Errorf("socket dialed for %q has %+v; want %+v", tc.query, got, tc.want)
		}
	}
	if _, err := connConfig(base + "?keepalives_idle=soon"); err == nil {
		t.Errorf("connConfig with keepalives_idle=soon = nil; want an error")
	}
}

// TestDialUnixSocket: the dialer connConfig gives dials a server's Unix
// socket (a URL's host=/folder) as pgx's own does; setting TCP options on
// it failed every connection with "operation not supported".
func TestDialUnixSocket(t *testing.T) {
	cfg, err := connConfig("postgres://u@/db?host=/tmp")
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/.s.PGSQL.5432"
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := cfg.DialFunc(context.Background(), "unix", path)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	c.Close()
}
