package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sessiontree/sessiontree"
)

// One transaction of [Store.Index] indexes at most indexChunk pending
// entries and, of those, only as many as hold indexChunkBytes of JSON
// (always at least one): at the trigram tokenizer's few MB/s, about a
// second's work, so that other writers do not wait long for the write
// lock, progress moves and a canceled context stops it soon. The count
// alone let one chunk hold a whole 200 MB tool output, 40 s under the
// lock; now the bytes bound what a chunk reads, the text each entry gives
// the index is capped (schema.sql, migration 10), and the text is read
// before the write transaction (see chunk). Larger chunks (fewer, larger
// FTS5 segments) measured no faster. Tests set smaller ones on their
// Store (Store.indexTune).
const (
	indexChunk      int64 = 2000
	indexChunkBytes int64 = 4 << 20
)

// indexTune holds a store's chunk bounds for [Store.Index]; zero means
// the default. Only tests set them.
type indexTune struct {
	chunkEntries, chunkBytes int64
	// serial reads each chunk after the one before it is written, as
	// Index did before it read ahead (benchmarks compare the two).
	serial bool
}

// limits returns the chunk bounds in effect.
func (t indexTune) limits() (entries, bytes int64) {
	entries, bytes = indexChunk, indexChunkBytes
	if t.chunkEntries > 0 {
		entries = t.chunkEntries
	}
	if t.chunkBytes > 0 {
		bytes = t.chunkBytes
	}
	return entries, bytes
}

// IndexProgress is what [Store.Index] reports as it goes: entries indexed so
// far of those pending when it began.
type IndexProgress struct {
	Done, Total int64
}

// IndexOptions configure [Store.Index]. The zero value indexes everything
// pending, waiting for other writers as long as the context allows.
type IndexOptions struct {
	// Progress, when set, is called before each chunk and once at the
	// end, never inside a transaction.
	Progress func(IndexProgress)
	// NoWait makes Index stop when another process holds the database's
	// write lock for more than a moment, returning what it indexed so far
	// with an error matching sessiontree.ErrLocked, instead of waiting.
	NoWait bool
	// Waiting, when set, is called each time Index starts waiting for
	// another process's write (after a moment's wait, which a write such
	// as an append does not outlast).
	Waiting func()
}

// Index brings the search index up to date and returns how many entries it
// indexed. Writes store entries only; the index holds each session's entries
// up to a mark kept in the session's row, and Index indexes what lies beyond
// it, many entries per FTS5 segment, advancing the mark in the same
// transaction (schema.sql, migrations 7 and 8). Each entry gives the index
// the first 1 MiB of its text ([IndexedTextLimit]). Calling it after a
// large write (as the command line's import does) keeps the searches that
// follow from reading what is pending themselves (see [Store.Search]),
// which they do only so far.
//
// It commits a chunk of entries at a time, each bounded in entries and in
// bytes, so other writers are not held up for long, and reads the next
// chunk's text while it writes one; ctx's cancellation stops it between
// chunks or inside one, and what it committed stays.
func (s *Store) Index(ctx context.Context, opts IndexOptions) (int64, error) {
	return s.index(ctx, opts, gate{d: s.d, noWait: opts.NoWait, waiting: opts.Waiting, grace: lockGrace})
}

// index is Index with the gate its writes go through. It reads each
// chunk's text while the chunk before it is written (a read transaction
// beside the write, on another core), so a catch-up costs the writes and
// not the reads too; at most two chunks are held at once.
//
// It runs after an import, not along it. The catch-up of issue 17's folder
// (bench folder-index) is the FTS5 insert: 79% of its CPU, three quarters
// of that in sqlite3Fts5HashWrite, with the reads (19%) beside it; a bare
// FTS5 insert of the same text takes longer (the floor, 0.86×). Indexing
// what each of an import's transactions committed, between them, measured
// 0.96-0.99× the import followed by Index (medians of 3 to 6 pairs): both
// are bound by their writes (0.34 s of the import's 0.43 s, 1.2 s of the
// catch-up's 1.26 s), which take turns at the one write lock, and the
// session holding three quarters of the text is the last one imported.
// The same insert on a connection and file of its own (an emulation, not
// this store) measured 1.09× the two in turn, for the same last session.
func (s *Store) index(ctx context.Context, opts IndexOptions, g gate) (int64, error) {
	var backlog int64
	err := s.d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		backlog, err = tx.IndexBacklog()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("index: %w", err)
	}
	p := IndexProgress{Total: backlog}
	ix := &indexer{s: s, ctx: ctx}
	defer ix.drop()
	var stale []sessiontree.IndexSpan // the spans of the chunk last found taken
	for backlog > 0 {
		if opts.Progress != nil {
			opts.Progress(p)
		}
		c, err := ix.next()
		if err != nil {
			return p.Done, fmt.Errorf("index: %w", err)
		}
		if c.Entries == 0 {
			break
		}
		if c.More && !s.indexTune.serial {
			ix.read(c.Spans)
		}
		err = g.write(ctx, func(tx sessiontree.DatabaseTx) error { return tx.WriteIndexChunk(c) })
		if errors.Is(err, sessiontree.ErrConflict) && !slices.Equal(stale, c.Spans) {
			// Another indexer took these entries in first. The same
			// chunk found taken twice is an error, not a race. The chunk
			// read past them is read again.
			stale = c.Spans
			ix.drop()
			continue
		}
		if err != nil {
			return p.Done, fmt.Errorf("index: %w", err)
		}
		p.Done += c.Entries
		p.Total = max(p.Total, p.Done)
		if !c.More {
			break
		}
	}
	if opts.Progress != nil && p.Total > 0 {
		opts.Progress(p)
	}
	return p.Done, nil
}

// indexer reads the chunks of [Store.index], the next one ahead when
// asked to.
type indexer struct {
	s     *Store
	ctx   context.Context
	ahead chan readChunk // the chunk being read ahead, or nil
}

// readChunk is a chunk read, or why it could not be.
type readChunk struct {
	c   sessiontree.IndexChunk
	err error
}

// read starts reading, in a goroutine of its own, the chunk past the
// spans of after (a chunk about to be written).
func (ix *indexer) read(after []sessiontree.IndexSpan) {
	ch := make(chan readChunk, 1)
	ix.ahead = ch
	go func() {
		var r readChunk
		r.err = ix.s.d.View(ix.ctx, func(tx sessiontree.DatabaseTx) (err error) {
			entries, bytes := ix.s.indexTune.limits()
			r.c, err = tx.NextIndexChunk(entries, bytes, after)
			return err
		})
		ch <- r
	}()
}

// next returns the chunk read ahead, or reads the next one now.
func (ix *indexer) next() (sessiontree.IndexChunk, error) {
	if ix.ahead == nil {
		ix.read(nil)
	}
	r := <-ix.ahead
	ix.ahead = nil
	return r.c, r.err
}

// drop waits for the chunk read ahead, if any, and forgets it: nothing
// reads the database once Index has returned.
func (ix *indexer) drop() {
	if ix.ahead != nil {
		<-ix.ahead
		ix.ahead = nil
	}
}
