package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// writeTimeout bounds how long a write of a response waits for its client
// to take it (a chunk of a body, an event stream's events or heartbeat):
// a client that stopped reading ends its request then, rather than hold
// its handler, session and connection for as long as it keeps the
// connection open. A variable for the tests.
var writeTimeout = 4 * heartbeat

// endGrace is how long the writes of a request that has ended (its
// client gone, a shutdown) may still take: a client reading takes the
// rest of its answer within Serve's grace, and a write waiting for one
// that stopped reading ends before that grace does, so the shutdown is
// clean. A variable for the tests.
var endGrace = shutdownGrace / 2

// writeChunk is how much of a body one deadline covers.
const writeChunk = 256 << 10

// timedWriter is a response whose writes have deadlines: writeTimeout
// from each chunk's start while its request is on, and endGrace from the
// request's end (the client gone, a shutdown), so that a write waiting
// for a client that stopped reading ends then too; nothing else would end
// it. mu guards ended and orders the deadlines set.
type timedWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	// grace is endGrace, read by the handler's goroutine as it starts,
	// not by end's, which nothing orders before a test that sets
	// endGrace again (the race detector caught one doing so after the
	// server it started had stopped).
	grace time.Duration
	mu    sync.Mutex
	ended bool
}

// timed wraps w, the response to r; call the returned stop when the
// handler returns.
func timed(w http.ResponseWriter, r *http.Request) (*timedWriter, func() bool) {
	tw := &timedWriter{ResponseWriter: w, rc: http.NewResponseController(w), grace: endGrace}
	return tw, context.AfterFunc(r.Context(), tw.end)
}

func (tw *timedWriter) end() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.ended = true
	_ = tw.rc.SetWriteDeadline(time.Now().Add(tw.grace))
}

// Write writes p a chunk at a time, each with a fresh deadline.
func (tw *timedWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		c := min(len(p), writeChunk)
		tw.mu.Lock()
		if !tw.ended {
			_ = tw.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		}
		tw.mu.Unlock()
		k, err := tw.ResponseWriter.Write(p[:c])
		n += k
		if err != nil {
			return n, err
		}
		p = p[c:]
	}
	return n, nil
}

// Unwrap gives http.ResponseController the response's own methods (Flush).
func (tw *timedWriter) Unwrap() http.ResponseWriter { return tw.ResponseWriter }

// timeBody gives the request's body, if it has one, a read deadline:
// Options.BodyTimeout from now, its headers read. Without it a client
// that sent its body a byte now and then, or stopped, held its handler
// and connection as long as it liked, token or not (the server reads the
// rest of a short body before it answers, a 401 too). The request's end
// (a shutdown) ends the read at once, which nothing else would. The
// deadline is lifted once the body is read to its end: the connection
// then waits for its client to go, and a deadline passing would end the
// request. A request without a body, an event stream's, has no deadline.
// Call stop when the request's handler returns.
func (srv *Server) timeBody(w http.ResponseWriter, r *http.Request) (stop func()) {
	if r.Body == nil || r.Body == http.NoBody {
		return func() {}
	}
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(srv.opts.BodyTimeout)
	if rc.SetReadDeadline(deadline) != nil {
		return func() {} // a response without a connection (a test's recorder)
	}
	b := &timedBody{ReadCloser: r.Body, rc: rc, deadline: deadline, timeout: srv.opts.BodyTimeout}
	b.stopEnd = context.AfterFunc(r.Context(), func() { _ = rc.SetReadDeadline(time.Now()) })
	r.Body = b
	return func() { b.stopEnd() }
}

// timedBody is a request's body under a read deadline; see
// [Server.timeBody].
type timedBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	deadline time.Time
	timeout  time.Duration
	// stopEnd stops the read's end at the request's end.
	stopEnd func() bool
	lifted  bool
}

// Read reads the body, lifting the deadline at its end and saying what a
// deadline passed means: the body too slow, or the request ended first.
func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF && !b.lifted:
		b.lifted = true
		b.stopEnd()
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(b.deadline):
		err = fmt.Errorf("the request ended before its body came: %w", context.Canceled)
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("the body did not all come within %v: %w", b.timeout, ErrTimeout)
	}
	return n, err
}
