package lines

import (
	"bufio"
	"errors"
	"io"
	"math"
	"runtime/debug"
)

// ErrTooLong is returned by [Reader.Next] for a line longer than the
// reader's bound.
var ErrTooLong = errors.New("line too long")

// Reader reads lines of at most a bound of bytes, not counting the
// newline. A line that fits in the read buffer is returned from it. A
// longer one is gathered in blocks, copies of the buffer as it fills,
// and joined into a slice of its own, of exactly its length, once its
// newline has come: a line refused for its length has cost at most the
// bound (a buffer grown by doubling would cost up to twice that, the old
// buffer and the new one), and a line accepted, its blocks and the
// joined copy, twice its length for a moment, then its length. The
// joined slice is the caller's to keep ([Reader.Own]), so a caller that
// keeps the line (an entry's JSON) does not copy it again.
type Reader struct {
	br     *bufio.Reader
	max    int
	blocks [][]byte // the line being gathered, a copy of the buffer each
	spare  [][]byte // blocks to reuse, at most spareBytes of them
	n      int      // bytes in blocks
	own    bool     // the last line returned was joined: the caller's
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
// next call, unless [Reader.Own] says it is the caller's. At the end of
// the input it returns io.EOF; for a line longer than the bound,
// ErrTooLong, once more than the bound has been read of it, and the
// reader is not to be used again. Other errors are the underlying
// reader's.
func (r *Reader) Next() ([]byte, error) {
	if r.n > 0 {
		r.release() // a line that ended in an error
	}
	r.own = false
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
			gathered := r.n
			r.release()
			r.own = true
			Dropped(gathered) // the blocks
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

// HugeLine is the length from which the memory of a line, or of the
// blocks it was gathered in, is given back to the operating system as
// soon as it is dropped ([Dropped]).
const HugeLine = 8 << 20

// Dropped tells that n bytes of a line are no longer referenced: the
// blocks of a line just joined, or a line the caller kept ([Reader.Own])
// and is done with. When n is at least [HugeLine], the garbage is
// collected and the Go heap's free pages go back to the operating system
// at once. The collector would free them at its next cycle but keep
// their pages for the Go heap to reuse, while the consumer of such a
// line hands it to SQLite, whose copies of it live outside the Go heap
// and cannot use them: importing a 200 MB line kept the blocks and the
// lines of earlier reads in the Go heap next to SQLite's copies (3.1
// times the line at its peak instead of 6). A forced collection costs
// milliseconds with a small heap, nothing next to reading such a line.
func Dropped(n int) {
	if n >= HugeLine {
		returnMemory()
	}
}

// returnMemory frees the garbage and gives the Go heap's free pages back
// to the operating system; a variable for tests.
var returnMemory = debug.FreeOSMemory

// Own reports whether the line [Reader.Next] returned last is in a slice
// of its own, which the caller may keep: a line longer than the read
// buffer is. A line in the read buffer is overwritten by the next call.
func (r *Reader) Own() bool { return r.own }

// join returns the blocks gathered and the line's last chunk as one
// slice of its own, of exactly the line's length.
func (r *Reader) join(last []byte) []byte {
	line := make([]byte, 0, r.n+len(last))
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
