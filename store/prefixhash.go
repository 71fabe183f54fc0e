package store

import (
	"bytes"
	"fmt"
	"hash"
	"io"
	"sync"
	"sync/atomic"
)

// prefixHash is the one owner of the SHA-256 an import records of a
// file's imported bytes: it hashes the bytes the JSONL reader reads
// through it, as it reads them, and gives the state after any line end
// the import consumed. The record's hash is then that of the bytes
// parsed, never of a second read of the file, which a writer may have
// changed in between: the next import would find "its" prefix unchanged,
// never import the rewritten lines and never report the change.
//
// The reader reads ahead of what the import consumes, so each read is
// kept, with the state before it, until the import has consumed past it
// (consumed): the state at an offset is the state before its read plus
// the bytes of that read up to it. The import consumes whole lines, so
// it asks only for the state at the end of a line (after its newline) or
// at the end of what was read (a last line without its newline); a read
// keeps its bytes up to its last newline, none when it has none. Memory
// holds the reader's read-ahead, a few megabytes at most, never a copy of
// a line longer than a read: a line of 64 MB, read 256 KiB at a time,
// was kept whole here beside the JSONL reader's copy of it, until the
// import consumed it.
//
// Read runs on the JSONL reader's goroutine, consumed and at on the
// import's: mu guards h, n, reads and free; mark is atomic.
type prefixHash struct {
	r     io.Reader
	mark  atomic.Int64 // no state before it will be asked for
	mu    sync.Mutex
	h     hash.Hash    // the state after the bytes read
	n     int64        // the file's offset after the bytes read
	reads []hashedRead // the reads not consumed yet, in order
	free  [][]byte     // buffers of reads consumed, for the next ones
}

// hashedRead is one read of the file through a prefixHash.
type hashedRead struct {
	start  int64     // the file's offset of its first byte
	before hash.Hash // the state before it
	data   []byte
}

// maxFreeReads bounds the buffers a prefixHash keeps for reuse: the
// reads that may wait for the import.
const maxFreeReads = 16

// newPrefixHash returns a prefixHash reading from r, the file from offset
// n on, with h the SHA-256 state after the file's first n bytes; the
// prefixHash owns h.
func newPrefixHash(r io.Reader, h hash.Hash, n int64) *prefixHash {
	p := &prefixHash{r: r, h: h, n: n}
	p.mark.Store(n)
	return p
}

// Read reads from the file and hashes what it read.
func (p *prefixHash) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.mu.Lock()
		p.drop()
		kept := b[:bytes.LastIndexByte(b[:n], '\n')+1]
		p.reads = append(p.reads, hashedRead{start: p.n, before: cloneHash(p.h), data: append(p.buffer(), kept...)})
		p.h.Write(b[:n])
		p.n += int64(n)
		p.mu.Unlock()
	}
	return n, err
}

// consumed says that the import consumed the file up to off: it asks for
// no state before it from now on.
func (p *prefixHash) consumed(off int64) { p.mark.Store(off) }

// at returns the SHA-256 state after the file's first off bytes, off
// being one the import consumed up to, the last so far: the end of a
// line, or of the bytes read.
func (p *prefixHash) at(off int64) (hash.Hash, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if off == p.n {
		return cloneHash(p.h), nil
	}
	for _, r := range p.reads {
		if r.start <= off && off <= r.start+int64(len(r.data)) {
			h := cloneHash(r.before)
			h.Write(r.data[:off-r.start])
			return h, nil
		}
	}
	return nil, fmt.Errorf("hash: offset %d is not among the bytes read", off)
}

// drop lets go of the reads the import consumed past; mu is held. A read
// whose bytes kept end where the import is still gives the state there.
func (p *prefixHash) drop() {
	mark, i := p.mark.Load(), 0
	for ; i < len(p.reads) && p.reads[i].start+int64(len(p.reads[i].data)) < mark; i++ {
		if len(p.free) < maxFreeReads {
			p.free = append(p.free, p.reads[i].data[:0])
		}
	}
	p.reads = append(p.reads[:0], p.reads[i:]...)
}

// buffer returns an empty buffer for a read; mu is held.
func (p *prefixHash) buffer() []byte {
	if len(p.free) == 0 {
		return nil
	}
	b := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return b
}

// cloneHash copies a SHA-256 state; crypto/sha256's implements
// hash.Cloner, whose Clone does not fail.
func cloneHash(h hash.Hash) hash.Hash {
	c, _ := h.(hash.Cloner).Clone()
	return c
}
