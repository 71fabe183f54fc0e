package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// startServe runs Serve over f's store on a new loopback listener (event
// streams polling every 10 ms) until cancel is called or t ends; Serve's
// error comes on served.
func startServe(t *testing.T, f *fixture) (ln net.Listener, cancel func(), served <-chan error) {
	t.Helper()
	h, err := New(f.store, Options{Token: token, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	return ln, cancel, done
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
// sockets' buffers hold. cancel stops Serve, whose error comes on
// served.
func stalledClient(t *testing.T, f *fixture, path, handler string) (cancel func(), served <-chan error) {
	t.Helper()
	ln, cancel, done := startServe(t, f)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.(*net.TCPConn).SetReadBuffer(4096)
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

// appendLarge appends 64 messages of 512 KiB to f's session: 32 MiB, far
// more than the sockets' buffers hold.
func appendLarge(t *testing.T, f *fixture) {
	t.Helper()
	st, err := f.store.OpenSession(context.Background(), f.session)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	text, _ := json.Marshal(map[string]string{"role": "user", "content": strings.Repeat("stalled ", 64<<10)})
	for range 64 {
		if _, err := sess.AppendMessage(context.Background(), text); err != nil {
			t.Fatal(err)
		}
	}
}

// waitHandlers waits until ok holds of the goroutines running handler
// (a method of Server; blocked of them in a write), failing with what
// after a minute: a handler writing 32 MiB under the race detector on a
// loaded machine took more than 10 s to fill the socket's buffers.
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

// handlers counts the goroutines running handler, and those of them
// blocked in a write to the connection.
func handlers(handler string) (blocked, running int) {
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
	stalledClient(t, f, "/api/sessions/s1/events", "events")
	waitHandlers(t, "events", func(_, running int) bool { return running == 0 }, "the handler to end")
}

// TestServeShutdownFinishesAnswer checks that a shutdown lets an answer
// being written to a client that reads it finish (within Serve's grace):
// the end of the request gives its writes endGrace, not none. The graces
// are lengthened: writing the 32 MiB answer under the race detector on a
// loaded machine took longer than the 2.5 s endGrace gives.
func TestServeShutdownFinishesAnswer(t *testing.T) {
	defer func(s, e time.Duration) { shutdownGrace, endGrace = s, e }(shutdownGrace, endGrace)
	shutdownGrace, endGrace = 2*time.Minute, time.Minute
	f := newFixture(t, Options{})
	appendLarge(t, f)
	ln, cancel, served := startServe(t, f)
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/sessions/s1/entries", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	go cancel()
	rest, err := io.ReadAll(resp.Body)
	var entries []json.RawMessage
	if err != nil || json.Unmarshal(append(first, rest...), &entries) != nil || len(entries) != 3+64 {
		t.Errorf("answer read across a shutdown: %d bytes, %v; want the 67 entries whole", 1+len(rest), err)
	}
	stopServe(t, func() {}, served)
}
