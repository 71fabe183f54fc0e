package store

import (
	"context"

	"github.com/sessiontree/sessiontree"
)

// IndexedTextLimit is how much of an entry's text the search index holds:
// its first 1 MiB, in bytes of UTF-8 ([sessiontree.SearchText], on
// every engine; a cut inside a character keeps that character's first
// bytes). The entry is stored
// whole, and read whole; a search does not find text beyond the limit,
// and its snippets and ranking read no further.
const IndexedTextLimit = sessiontree.SearchTextLimit

// Bounds of what a search reads of the entries not yet in the index
// ([Store.Search]): at most PendingScanEntries of them, newest first, and
// of those as many as hold PendingScanBytes of JSON. Indexing that much
// text for the query costs a search about a tenth of a second at most.
const (
	PendingScanEntries = 1000
	PendingScanBytes   = 2 << 20
)

// pendingScan is what a search reads of the entries not yet in the index:
// their text, indexed for the search alone (sessiontree.TextIndex) so
// that a query, its short phrases and their expansion mean there what
// they mean in the index. idx is nil when the search reads no pending
// entry.
type pendingScan struct {
	idx        sessiontree.TextIndex
	scanned    int64 // pending entries read
	unsearched int64 // pending entries left unread (the bounds)
}

// readPending reads the pending entries the search takes, in its read
// transaction, and indexes their text for the search.
func (sr *searcher) readPending() error {
	pt, err := sr.tx.PendingTexts(sr.scope, PendingScanEntries, PendingScanBytes)
	if err != nil {
		return err
	}
	sr.pend.scanned, sr.pend.unsearched = pt.Read, pt.Total-pt.Read
	if pt.Read == 0 {
		return nil
	}
	sr.pend.idx, err = sr.tx.TextIndex(pt.Texts)
	return err
}

// match runs a match query over the pending entries read, newest
// first, up to window of them, as searcher.match does over the index.
func (p *pendingScan) match(ctx context.Context, match sessiontree.MatchQuery, window int) ([]int64, error) {
	if p.idx == nil {
		return nil, nil
	}
	return p.idx.MatchKeys(ctx, match, window)
}

// close drops the scratch index.
func (sr *searcher) close() {
	if sr.pend.idx != nil {
		sr.pend.idx.Close()
	}
}
