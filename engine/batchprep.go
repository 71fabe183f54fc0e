package engine

import (
	"fmt"
	"sync/atomic"

	"github.com/sessiontree/sessiontree"
)

// batchPrep validates the entries of a batch (their fields, and that
// these are what their JSON holds) and reads their facts (see
// factsOf) in a goroutine of its own, a chunk at a time, while the writer
// stores the chunks before. Both only read the entries' JSON, and that
// scanning is about a third of what a batch costs; on a second core it
// overlaps SQLite's work instead of adding to it. A batch of one chunk
// or less is prepared before the write, without a goroutine.
type batchPrep struct {
	entries []sessiontree.Entry
	facts   []facts
	// ready[c] is closed once chunk c is prepared, or validation failed
	// at or before it.
	ready []chan struct{}
	// bad is the index of the first invalid entry (len(entries): none);
	// err, its error, is written before any channel from its chunk on is
	// closed, so a reader that has waited for a chunk at or after it sees
	// it.
	bad  atomic.Int64
	err  error
	done chan struct{}
}

// prepChunk is how many entries batchPrep prepares before it lets the
// writer have them.
const prepChunk = 256

// prepareBatch starts preparing entries.
func prepareBatch(entries []sessiontree.Entry) *batchPrep {
	n := len(entries)
	p := &batchPrep{
		entries: entries,
		facts:   make([]facts, n),
		ready:   make([]chan struct{}, (n+prepChunk-1)/prepChunk),
		done:    make(chan struct{}),
	}
	p.bad.Store(int64(n))
	for c := range p.ready {
		p.ready[c] = make(chan struct{})
	}
	if len(p.ready) <= 1 {
		p.run()
	} else {
		go p.run()
	}
	return p
}

func (p *batchPrep) run() {
	defer close(p.done)
	for c, ready := range p.ready {
		for i := c * prepChunk; i < min((c+1)*prepChunk, len(p.entries)); i++ {
			e := p.entries[i]
			p.facts[i] = factsOf(e)
			err := e.Validate()
			if err == nil {
				err = checkFields(e, p.facts[i].canonical)
			}
			if err != nil {
				p.err = fmt.Errorf("append batch: entry %d: %w", i+1, err)
				p.bad.Store(int64(i))
				for _, r := range p.ready[c:] {
					close(r)
				}
				return
			}
		}
		close(ready)
	}
}

// entryFacts returns the facts of entry i once they are read, or the
// validation error of an entry at or before it.
func (p *batchPrep) entryFacts(i int) (*facts, error) {
	<-p.ready[i/prepChunk]
	if int(p.bad.Load()) <= i {
		return nil, p.err
	}
	return &p.facts[i], nil
}

// wait waits until every entry is prepared and returns the first
// validation error, if any. After it returns, nothing reads the entries.
func (p *batchPrep) wait() error {
	<-p.done
	return p.err
}
