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
// newline. A line that fits in the read buffer is returned from it. A
// longer one is gathered in blocks, copies of the buffer as it fills,
// and joined into one slice once its newline has come: a line refused
// for its length has cost at most the bound (a buffer grown by doubling
// would cost up to twice that, the old buffer and the new one), and a
// line accepted, its blocks and the joined copy, about twice its length.
type Reader struct {
	br     *bufio.Reader
	max    int
	blocks [][]byte // the line being gathered, a copy of the buffer each
	spare  [][]byte // blocks to reuse, at most spareBytes of them
	n      int      // bytes in blocks
	line   []byte   // a long line joined, reused
}

// spareBytes bounds the blocks kept for the next long line: lines of
// up to a few megabytes (a large tool result) then cost no allocation,
// and a giant line leaves nothing behind but its joined copy.
const spareBytes = 4 << 20

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
	if r.n > 0 {
		r.release() // a line that ended in an error
	}
	for {
		chunk, err := r.br.ReadSlice('\n')
		n := r.n + len(chunk) // the line's bytes so far
		if err == nil {
			n-- // the newline, which does not count
		}
		if n > r.max {
			return nil, ErrTooLong
		}
		if err == bufio.ErrBufferFull {
			r.keep(chunk)
			continue
		}
		line := chunk
		if r.n > 0 {
			line = r.join(chunk)
			r.release()
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

// keep copies a full buffer into a block of the line being gathered.
func (r *Reader) keep(chunk []byte) {
	var b []byte
	if k := len(r.spare); k > 0 && len(r.spare[k-1]) == len(chunk) {
		b, r.spare = r.spare[k-1], r.spare[:k-1]
	} else {
		b = make([]byte, len(chunk))
	}
	copy(b, chunk)
	r.blocks = append(r.blocks, b)
	r.n += len(chunk)
}

// join returns the blocks gathered and the line's last chunk as one
// slice, in a buffer reused from line to line.
func (r *Reader) join(last []byte) []byte {
	need := r.n + len(last)
	if need > cap(r.line) {
		r.line = nil // let it go before the bigger one is made
		r.line = make([]byte, 0, min(max(need+need/4, 64<<10), r.max+1))
	}
	line := r.line[:0]
	for _, b := range r.blocks {
		line = append(line, b...)
	}
	return append(line, last...)
}

// release ends a line: its blocks become spares, up to spareBytes.
func (r *Reader) release() {
	for i, b := range r.blocks {
		if (len(r.spare)+1)*len(b) <= spareBytes {
			r.spare = append(r.spare, b)
		}
		r.blocks[i] = nil
	}
	r.blocks, r.n = r.blocks[:0], 0
}
