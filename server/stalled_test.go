package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// stalledStream starts Serve over f's store and opens the event stream of
// f's session from a client that never reads it, then appends far more
// than the sockets' buffers hold, and returns once the stream's handler
// is blocked writing. cancel stops Serve, whose error comes on served.
func stalledStream(t *testing.T, f *fixture) (cancel func(), served <-chan error) {
	t.Helper()
	h, err := New(f.store, Options{Token: token, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET /api/sessions/s1/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", ln.Addr(), token)
	st, err := f.store.OpenSession(context.Background(), f.session)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	text, _ := json.Marshal(map[string]string{"role": "user", "content": strings.Repeat("stalled ", 64<<10)})
	for range 64 { // 32 MiB
		if _, err := sess.AppendMessage(context.Background(), text); err != nil {
			t.Fatal(err)
		}
	}
	waitStreams(t, func(blocked, _ int) bool { return blocked == 1 }, "the stream's handler blocked writing")
	return cancel, done
}

// waitStreams waits until ok holds of the event streams' handlers running
// (blocked of them in a write), failing with what after 10 s.
func waitStreams(t *testing.T, ok func(blocked, running int) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		blocked, running := streamHandlers()
		if ok(blocked, running) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %d stream handlers running, %d blocked writing", what, running, blocked)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// streamHandlers counts the goroutines running an event stream, and those
// of them blocked in a write to the connection.
func streamHandlers() (blocked, running int) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "server.(*Server).events(") {
			continue
		}
		running++
		if strings.Contains(g, "waitWrite") {
			blocked++
		}
	}
	return blocked, running
}

// TestServeShutdownStalledStream checks that Serve shuts down cleanly,
// ending an event stream whose client stopped reading: its handler,
// blocked writing, never saw its request end, so Shutdown waited out its
// grace and Serve returned "context deadline exceeded", the handler still
// blocked (holding its session and connection) after Serve had returned.
func TestServeShutdownStalledStream(t *testing.T) {
	f := newFixture(t, Options{})
	cancel, served := stalledStream(t, f)
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after cancel = %v; want nil", err)
		}
	case <-time.After(shutdownGrace + 10*time.Second):
		t.Fatal("Serve did not return")
	}
	waitStreams(t, func(_, running int) bool { return running == 0 }, "the stream's handler to end")
}

// TestStalledStreamEnds checks that an event stream whose client stops
// reading ends once a write has waited streamWriteTimeout, while the
// server goes on: it used to block its handler, its session and its
// connection for as long as the client kept the connection open.
func TestStalledStreamEnds(t *testing.T) {
	defer func(d time.Duration) { streamWriteTimeout = d }(streamWriteTimeout)
	streamWriteTimeout = 200 * time.Millisecond
	f := newFixture(t, Options{})
	stalledStream(t, f)
	waitStreams(t, func(_, running int) bool { return running == 0 }, "the stream's handler to end")
}
