package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// startServe runs Serve over f's store on a new loopback listener (event
// streams polling every 10 ms) until cancel is called or t ends; Serve's
// error comes on served. The connections it accepts have small send
// buffers (smallBuffers).
func startServe(t *testing.T, f *fixture) (ln net.Listener, cancel func(), served <-chan error) {
	t.Helper()
	h, err := New(f.store, Options{Token: token, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = smallBuffers{tl}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	return ln, cancel, done
}

// smallBuffers is a listener whose connections have a send buffer of
// 4 KiB (the kernel doubles it), not one that grows to megabytes: with a
// client's receive buffer of 64 KiB (dialSmall), a few hundred KiB of
// answer fill every buffer between a handler and a client that does not
// read, so the tests of stalled writes need no more data than that. (A
// receive buffer of 4 KiB too made a client that reads take 9 s over
// 512 KiB: the window stays too small to keep loopback busy.)
type smallBuffers struct{ net.Listener }

// Accept accepts a connection and shrinks its send buffer.
func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// dialSmall connects to addr with a receive buffer of 64 KiB; see
// smallBuffers.
func dialSmall(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(64 << 10)
	}
	return c, err
}

// stopServe cancels Serve's context and waits for it to return, which it
// must with nil: a clean shutdown.
func stopServe(t *testing.T, cancel func(), served <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after cancel = %v; want nil", err)
		}
	case <-time.After(shutdownGrace + 10*time.Second):
		t.Fatal("Serve did not return")
	}
}

// stalledClient starts Serve over f's store and GETs path (of f's
// session, a handler's) from a client that never reads the answer, after
// (entries) or before (an event stream) appending far more than the
// sockets' buffers hold (smallBuffers). cancel stops Serve, whose error
// comes on served.
func stalledClient(t *testing.T, f *fixture, path, handler string) (cancel func(), served <-chan error) {
	t.Helper()
	ln, cancel, done := startServe(t, f)
	c, err := dialSmall(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	get := func() {
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path, ln.Addr(), token)
	}
	if handler == "events" {
		get()
		waitHandlers(t, handler, func(_, running int) bool { return running == 1 }, "the stream to start")
	}
	appendLarge(t, f)
	if handler != "events" {
		get()
	}
	return cancel, done
}

// largeMessages is how many messages appendLarge appends.
const largeMessages = 8

// appendLarge appends largeMessages messages of 64 KiB to f's session:
// 512 KiB, far more than the sockets' buffers hold once they are small
// (smallBuffers: under 200 KiB in all, with the HTTP server's and
// client's own buffers). It was 32 MiB, to fill buffers of their default
// sizes, which grow to megabytes: writing it took most of a minute under
// the race detector.
func appendLarge(t *testing.T, f *fixture) {
	t.Helper()
	st, err := f.store.OpenSession(context.Background(), f.session)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	text, _ := json.Marshal(map[string]string{"role": "user", "content": strings.Repeat("stalled ", 8<<10)})
	for range largeMessages {
		if _, err := sess.AppendMessage(context.Background(), text); err != nil {
			t.Fatal(err)
		}
	}
}

// waitHandlers waits until ok holds of the goroutines running handler
// (a method of Server; blocked of them in a write), failing with what
// after a minute: a handler writing 32 MiB under the race detector on a
// loaded machine took more than 10 s to fill sockets' buffers of their
// default sizes, and a loaded machine may still be that slow.
func waitHandlers(t *testing.T, handler string, ok func(blocked, running int) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		blocked, running := handlers(handler)
		if ok(blocked, running) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %d %s handlers running, %d blocked writing", what, running, handler, blocked)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// goroutines returns the stacks of every goroutine.
func goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// handlers counts the goroutines running handler, and those of them
// blocked in a write to the connection.
func handlers(handler string) (blocked, running int) {
	for _, g := range goroutines() {
		if !strings.Contains(g, "server.(*Server)."+handler+"(") {
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
	defer func(d time.Duration) { endGrace = d }(endGrace)
	endGrace = 100 * time.Millisecond // the stalled writes end then, not 2.5 s after the shutdown
	for _, tc := range []struct{ path, handler string }{
		{"/api/sessions/s1/events", "events"},
		{"/api/sessions/s1/entries", "entries"},
	} {
		t.Run(tc.handler, func(t *testing.T) { shutdownStalled(t, tc.path, tc.handler) })
	}
}

func shutdownStalled(t *testing.T, path, handler string) {
	f := newFixture(t, Options{})
	cancel, served := stalledClient(t, f, path, handler)
	waitHandlers(t, handler, func(blocked, _ int) bool { return blocked == 1 }, "the handler blocked writing")
	stopServe(t, cancel, served)
	waitHandlers(t, handler, func(_, running int) bool { return running == 0 }, "the handler to end")
}

// TestStalledStreamEnds checks that an event stream whose client stops
// reading ends once a write has waited writeTimeout, while the
// server goes on: it used to block its handler, its session and its
// connection for as long as the client kept the connection open.
func TestStalledStreamEnds(t *testing.T) {
	defer func(d time.Duration) { writeTimeout = d }(writeTimeout)
	writeTimeout = 200 * time.Millisecond
	f := newFixture(t, Options{})
	cancel, served := stalledClient(t, f, "/api/sessions/s1/events", "events")
	waitHandlers(t, "events", func(_, running int) bool { return running == 0 }, "the handler to end")
	// Serve returns after the handler has (its connection closed by the
	// shutdown), so the handler's reads of writeTimeout come before the
	// deferred write that restores it, as the race detector sees it.
	stopServe(t, cancel, served)
}

// TestServeShutdownFinishesAnswer checks that a shutdown lets an answer
// being written to a client that reads it finish (within Serve's grace):
// the end of the request gives its writes endGrace, not none. The
// shutdown comes while the handler is blocked writing (the client not
// reading yet, the buffers small), so most of the answer is written after
// it. The graces are lengthened: writing a 32 MiB answer under the race
// detector on a loaded machine took longer than the 2.5 s endGrace gives,
// and the test does not wait them out.
func TestServeShutdownFinishesAnswer(t *testing.T) {
	defer func(s, e time.Duration) { shutdownGrace, endGrace = s, e }(shutdownGrace, endGrace)
	shutdownGrace, endGrace = 2*time.Minute, time.Minute
	f := newFixture(t, Options{})
	appendLarge(t, f)
	ln, cancel, served := startServe(t, f)
	client := &http.Client{Transport: &http.Transport{DialContext: dialSmall}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/sessions/s1/entries", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	waitHandlers(t, "entries", func(blocked, _ int) bool { return blocked == 1 }, "the handler blocked writing")
	cancel()
	waitShutdown(t)
	rest, err := io.ReadAll(resp.Body)
	var entries []json.RawMessage
	if err != nil || json.Unmarshal(append(first, rest...), &entries) != nil || len(entries) != 3+largeMessages {
		t.Errorf("answer read across a shutdown: %d bytes, %v; want the %d entries whole", 1+len(rest), err, 3+largeMessages)
	}
	stopServe(t, func() {}, served)
}

// waitShutdown waits until Serve is shutting its HTTP server down, which
// it does after it has ended the requests in progress (failing after a
// minute).
func waitShutdown(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !slices.ContainsFunc(goroutines(), func(g string) bool { return strings.Contains(g, "net/http.(*Server).Shutdown(") }) {
		if time.Now().After(deadline) {
			t.Fatal("Serve did not start its shutdown within a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
