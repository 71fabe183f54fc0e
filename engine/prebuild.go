package engine

import (
	"cmp"
	"sync/atomic"

	"github.com/sessiontree/sessiontree"
)

// Building an append's entries before its transaction.
//
// An append's entry JSON, its checksum and its facts (what it counts,
// its role, its effects) depend only on the draft, its id, its parent's
// id and its time. The appending goroutine builds them before it queues
// (see AppendAll), with a fresh id and the leaf it expects, so that the
// transaction's holder, which runs the appends of a whole group one
// after the other (group.go), only inserts them: at 64 writers that work
// was a tenth of what it did. The leaf expected is the one this Storage's
// last append made; when the transaction finds another (a first append
// on a session opened with entries, another writer), the entries are
// built again there, as before.

// prebuilt are the entries of an append built before its transaction,
// each under the one before.
type prebuilt struct {
	entries []built
}

// built is an entry with its facts.
type built struct {
	e sessiontree.Entry
	f facts
}

// leafGuess is the leaf this Storage's last append or SetLeaf left: the
// leaf its next append most likely finds.
type leafGuess struct{ p atomic.Pointer[string] }

func (g *leafGuess) load() string {
	if p := g.p.Load(); p != nil {
		return *p
	}
	return ""
}

func (g *leafGuess) store(id string) { g.p.Store(&id) }

// prebuild builds drafts, each under the one before and the first under
// the leaf guessed, stamped with now when they have no time. It stops at
// a draft it cannot build: the transaction builds that one again and
// reports why.
func (s *Storage) prebuild(drafts []sessiontree.Draft, now string) *prebuilt {
	parent := s.guess.load()
	p := &prebuilt{entries: make([]built, 0, len(drafts))}
	for _, d := range drafts {
		id := d.ID
		if id == "" {
			id = sessiontree.NewEntryID(nil)
		}
		e, sf, err := sessiontree.BuildEntryFacts(d, id, parent, cmp.Or(d.Timestamp, now))
		if err != nil {
			break
		}
		p.entries = append(p.entries, built{e: e, f: factsFrom(e, sf)})
		parent = id
	}
	return p
}

// at returns the append's entry i when it was built under leaf, nil
// otherwise. Each entry is checked, not only the first: when the
// transaction gives an entry another id than the one it was built with
// (the fresh id was taken meanwhile), the next was built under an id the
// append did not use.
func (p *prebuilt) at(i int, leaf string) *built {
	if p == nil || i >= len(p.entries) || p.entries[i].e.ParentID != leaf {
		return nil
	}
	return &p.entries[i]
}
