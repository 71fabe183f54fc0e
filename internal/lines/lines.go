// Package lines reads lines of bounded length: the JSONL reader's session
// files and the entries `sessiontree append` reads from its input. A
// line longer than the bound is refused as soon as the bound is passed,
// and memory never holds more of it than the bound, so an input without
// newlines (/dev/zero, a binary file) costs at most the bound.
//
// # Concurrency
//
// A [Reader] is not safe for concurrent use.
package lines

import (
	"bufio"
	"errors"
	"io"
	"math"
)

// ErrTooLong is returned by [Reader.Next] for a line longer than the
// reader's bound.
var ErrTooLong = errors.New("line too long")

// Reader reads lines of at most a bound of bytes, not counting the
// newline.
type Reader struct {
	br  *bufio.Reader
	buf []byte // gathers a line longer than br's buffer
	max int
}

// NewReader returns a reader of r's lines of at most max bytes (max >
// 0), reading through a buffer of size bytes: a line that fits in it is
// returned without a copy.
func NewReader(r io.Reader, size, max int) *Reader {
	max = min(max, math.MaxInt-1) // room for the newline
	return &Reader{br: bufio.NewReaderSize(r, size), max: max}
}

// Max returns the longest line the reader accepts, in bytes.
func (r *Reader) Max() int { return r.max }

// Next returns the next line, its newline included when it has one (the
// last line of an input may have none). The slice is valid until the
// next call. At the end of the input it returns io.EOF; for a line longer
// than the bound, ErrTooLong, once more than the bound has been read of
// it, and the reader is not to be used again. Other errors are the
// underlying reader's.
func (r *Reader) Next() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		n := len(r.buf) + len(chunk) // the line's bytes so far
		if err == nil {
			n-- // the newline, which does not count
		}
		if n > r.max {
			return nil, ErrTooLong
		}
		if err == bufio.ErrBufferFull {
			r.gather(chunk)
			continue
		}
		line := chunk
		if len(r.buf) > 0 {
			r.gather(chunk)
			line = r.buf
		}
		switch {
		case err == nil:
			return line, nil
		case err == io.EOF && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// gather appends chunk to the line being gathered, growing the buffer to
// at most the bound and its newline: append alone would grow it by a
// quarter or more past what a line may need.
func (r *Reader) gather(chunk []byte) {
	need := len(r.buf) + len(chunk)
	if need > cap(r.buf) {
		grown := make([]byte, len(r.buf), min(max(2*cap(r.buf), need), r.max+1))
		copy(grown, r.buf)
		r.buf = grown
	}
	r.buf = append(r.buf, chunk...)
}
