package main

import (
	"context"
	"io"
)

// input returns the command's stdin as a reader that stops at once, with
// ctx's error, when ctx is done: a read of a terminal or a pipe waits
// until input comes, and Ctrl-C or SIGTERM (which cancel ctx) must stop a
// command waiting for it (append, rm's question) instead of leaving it
// deaf to them until the next line.
func (a *app) input(ctx context.Context) io.Reader {
	return &ctxReader{ctx: ctx, r: a.stdin, done: make(chan readResult, 1)}
}

// ctxReader reads from r in a goroutine, so that a read waiting for input
// can be given up when ctx is done; that read then finishes on its own,
// its bytes dropped, as the command is stopping. Not safe for concurrent
// use.
type ctxReader struct {
	ctx     context.Context
	r       io.Reader
	buf     []byte          // the read in flight writes here
	waiting bool            // a read is in flight
	done    chan readResult // its result
}

// readResult is what one read of the underlying reader returned.
type readResult struct {
	n   int
	err error
}

// Read reads from r, or fails with ctx's error once ctx is done.
func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if !c.waiting {
		if cap(c.buf) < len(p) {
			c.buf = make([]byte, len(p))
		}
		buf := c.buf[:len(p)]
		c.waiting = true
		go func() {
			n, err := c.r.Read(buf)
			c.done <- readResult{n, err}
		}()
	}
	select {
	case res := <-c.done:
		c.waiting = false
		return copy(p, c.buf[:res.n]), res.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}
