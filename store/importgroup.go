package store

// Small new files imported many to a transaction. A pi folder holds
// thousands of short sessions, and one transaction each cost more than
// their entries: the read of the file's record, the begin, the commit
// (a quarter of a small file's import, measured). So a goroutine reads
// the files ahead of the writer, on the other core (open, the record's
// read, parse, checks, SHA-256), and hands the writer the small new ones
// in groups, each group one transaction; every other file is imported
// alone, as before (importFile), except one imported before and unchanged
// since, which the reader finds so itself, and a new file larger than a
// chunk, whose first pass the reader runs (importahead.go). The first
// group is small and each after it larger, so that the writer starts
// soon. A group commits its files whole, each with its record, so an
// import cut short resumes as it does after a file's transaction.

import (
	"context"
	"hash"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

const (
	// groupFileBytes is the largest file a group takes: a larger one
	// is imported alone, its own transactions spreading their cost. A
	// group reads a file whole before it writes it, where a file alone is
	// written as it is read: a lone file of 0.9 MB imported up to 8%
	// slower in a group, one of 200 KB as fast (BenchmarkImport/one-ab,
	// by turns), and the transaction a group spares is a small part of
	// the import of a file that large.
	groupFileBytes int64 = 256 << 10
	// A group holds at most groupFiles files and groupBytes of them,
	// so that it holds the write lock a moment only, and the files read
	// ahead (at most three groups: one written, one waiting, one being
	// read) bound the import's memory.
	groupFiles       = 256
	groupBytes int64 = 4 << 20
	// The first group holds at most groupFirstFiles files (and as
	// large a part of groupBytes), each group after it twice as many as
	// the one before, up to groupFiles: the writer waits for the first
	// group to be read, and 256 small files took the reader 38-45 ms
	// (the bench's folder, on a loaded machine) while the writer sat
	// idle. A few transactions more cost less than that.
	groupFirstFiles = 16
)

// importBatch is what the reader hands the writer: a group of small new
// files, read and checked, to import in one transaction, or one file to
// import alone, or whose result the reader found (known: a file imported
// before and unchanged since).
type importBatch struct {
	group []*stagedFile
	alone candidate // when group is nil
	known *FileResult
	// checked is alone opened, its first pass run ahead (checkAhead):
	// whoever takes the batch closes it (discard, or its import).
	checked *fileImport
}

// discard closes what the batch holds open, for a batch not imported.
func (b importBatch) discard() {
	if b.checked != nil {
		b.checked.close()
	}
}

// stagedFile is a small new file read and checked for a group: its
// session (from the header), its entries, how far the import reaches and
// the hash state after those bytes. The file is closed.
type stagedFile struct {
	oneRead
	fim  *fileImport
	c    candidate
	h    hash.Hash
	full bool
}

// grouped tells whether an import with opts may group files: tests
// that tune a one-pass import's batches want every file alone.
func grouped(opts ImportOptions) bool {
	return !opts.tune.alone && opts.tune.afterAppend == nil && opts.tune.appendEntries == 0
}

// readAhead reads files in a goroutine, in order, and sends them to the
// channel it returns as batches (see importBatch), until done is closed.
// The channel is closed once the goroutine has finished.
func (s *Store) readAhead(ctx context.Context, files []candidate, opts ImportOptions, done <-chan struct{}) <-chan importBatch {
	r := &reader{s: s, ctx: ctx, opts: opts, out: make(chan importBatch, 1), done: done, limit: groupFirstFiles, chunk: opts.tune.withDefaults().chunkBytes}
	go func() {
		defer close(r.out)
		for _, c := range files {
			if !r.take(c) {
				return
			}
		}
		r.flush()
	}()
	return r.out
}

// reader is readAhead's goroutine: the group it gathers, and where it
// sends the batches.
type reader struct {
	s     *Store
	ctx   context.Context
	opts  ImportOptions
	out   chan importBatch
	done  <-chan struct{}
	group []*stagedFile
	bytes int64 // of the group's files
	limit int   // the files the group may hold (groupFirstFiles on)
	chunk int64 // the import's chunk, in bytes
	// large says whether each of the last two batches sent may be a
	// file read in chunks: the writer may be on it, holding two chunks,
	// and a file's second pass is started ahead only when it is not.
	large [2]bool
}

// take reads file c and adds it to the group, or sends it alone (the
// group first); false when the import is done with the reader.
func (r *reader) take(c candidate) bool {
	select {
	case <-r.done:
		return false
	default:
	}
	sf, alone := (*stagedFile)(nil), importBatch{alone: c}
	if grouped(r.opts) && r.ctx.Err() == nil {
		sf, alone = r.s.stage(r.ctx, c, r.opts, !r.large[0] && !r.large[1])
	}
	if sf == nil {
		if r.flush() && r.send(alone) {
			return true
		}
		alone.discard()
		return false
	}
	if len(r.group) == r.limit || r.bytes+sf.consumed > groupBytes/groupFiles*int64(r.limit) {
		if !r.flush() {
			return false
		}
	}
	r.group, r.bytes = append(r.group, sf), r.bytes+sf.consumed
	return true
}

// flush sends the group gathered, if any; the next may be twice as
// large.
func (r *reader) flush() bool {
	ok := true
	if len(r.group) > 0 {
		ok = r.send(importBatch{group: r.group})
		r.limit = min(2*r.limit, groupFiles)
	}
	r.group, r.bytes = nil, 0
	return ok
}

// send sends b, unless the import is done with the reader (false).
func (r *reader) send(b importBatch) bool {
	select {
	case r.out <- b:
		r.large = [2]bool{b.group == nil && b.alone.size > r.chunk, r.large[0]}
		return true
	case <-r.done:
		return false
	}
}

// stage reads and checks the file c for a group, or returns nil and the
// batch importing it alone when it is not for one: too large, imported
// before, damaged (in a way the mode refuses or not), unreadable. A file
// left out is imported alone, which says what it is, unless it is a file
// imported before and unchanged since, whose result stage returns
// (known): importing it alone would read its record again only to find
// that (a quarter more CPU for an import of an unchanged folder,
// BenchmarkImport/small-again-ab). A new file larger than a chunk has the
// first pass of its import run here (checked, see checkAhead), and its
// second started when gather says so.
func (s *Store) stage(ctx context.Context, c candidate, opts ImportOptions, gather bool) (sf *stagedFile, alone importBatch) {
	alone.alone = c
	if c.err != nil {
		return nil, alone
	}
	fim, err := s.openImport(ctx, gate{}, c.path, opts, nil, &FileResult{Path: c.path})
	if fim == nil {
		return nil, alone
	}
	switch {
	case err != nil:
	case fim.found:
		alone.known = fim.unchanged()
	case fim.fi.Size() > fim.tune.chunkBytes:
		if fim.checkAhead(gather) {
			alone.checked = fim
			return nil, alone
		}
	case fim.fi.Size() <= groupFileBytes:
		sf = fim.stage(c)
	}
	fim.close()
	return sf, alone
}

// unchanged returns the result of a file imported before and unchanged
// since, as importing it alone finds it (resume): its imported part as it
// was, and its size the one its record says. It returns nil for any other
// file.
func (fim *fileImport) unchanged() *FileResult {
	if !fim.rec.unchangedAt(fim.fi) {
		return nil
	}
	if _, err := checkPrefix(fim.f, fim.rec, fim.fi.Size()); err != nil {
		return nil
	}
	return &FileResult{Path: fim.path, SessionID: fim.rec.SessionID, Outcome: OutcomeUnchanged}
}

// stage reads and checks the new file c, opened by fim, for a group, or
// returns nil when it is not for one.
func (fim *fileImport) stage(c candidate) *stagedFile {
	sf := &stagedFile{fim: fim, c: c}
	sf.tee = fim.prefixHash()
	err := fim.walk(-1, sf.tee, sf.visit)
	if err == nil && !sf.full && fim.meta.ID != "" && len(fim.res.Problems) == 0 {
		fim.parsed()
		sf.h, err = sf.hash()
	}
	if err != nil || sf.full || sf.h == nil {
		return nil
	}
	return sf
}

// visit takes one record of the file's walk.
func (sf *stagedFile) visit(r jsonl.Record, skip *jsonl.LineError) error {
	if r.Kind == jsonl.KindHeader {
		if err := sf.fim.header(r.Header); err != nil {
			return err // imported alone, which reports it
		}
	}
	if sf.take(sf.fim, r, skip) {
		sf.full = true
		return errGiveWay
	}
	return nil
}

// importGroup imports a group of staged files in one transaction, and
// returns each file's result, nil for those to import alone: a file
// another import recorded since it was read, or whose session the store
// has (a conflict, or a moved file to follow). When the transaction
// fails, every file is for importing alone, unless the error stops the
// import (the write lock taken and NoWait: returned).
func (s *Store) importGroup(ctx context.Context, g gate, group []*stagedFile, opts ImportOptions) ([]*FileResult, error) {
	results := make([]*FileResult, len(group))
	err := g.write(ctx, func(tx sessiontree.DatabaseTx) error {
		clear(results) // the transaction may run more than once
		for i, sf := range group {
			res, err := sf.write(tx)
			if err != nil {
				return err
			}
			results[i] = res
		}
		return nil
	})
	if lockHeld(err) {
		return nil, err
	}
	if err != nil {
		clear(results)
	}
	if hook := opts.tune.afterGroup; hook != nil && err == nil {
		n := 0
		for _, r := range results {
			if r != nil {
				n++
			}
		}
		hook(n)
	}
	return results, nil
}

// write imports the staged file in tx, a group's transaction, and
// returns its result; nil, writing nothing, when the file is to be
// imported alone.
func (sf *stagedFile) write(tx sessiontree.DatabaseTx) (*FileResult, error) {
	fim := sf.fim
	if _, found, err := readRecord(tx, fim.path); err != nil || found {
		return nil, err
	}
	if taken, err := tx.SessionExists(fim.meta.ID); err != nil || taken {
		return nil, err
	}
	st, err := tx.NewSession(fim.meta, nil)
	if err != nil {
		return nil, err
	}
	if len(sf.batch) > 0 {
		if err := tx.AppendEntries(st, sf.batch); err != nil {
			return nil, err
		}
	}
	rec := newRecord(st.ID(), sf.consumed, sf.pos, sf.h, int64(len(sf.batch)))
	if err := fim.save(tx, &rec, true); err != nil {
		return nil, err
	}
	res := *fim.res
	res.Outcome, res.Entries, res.Bytes = OutcomeNew, len(sf.batch), sf.consumed
	return &res, nil
}
