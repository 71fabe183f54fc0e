package store

// One file's import as a plan of transactions: read once in one
// transaction when the new part fits in a chunk, else checked and then
// committed chunk by chunk; attempts started over when another import of
// the same file committed meanwhile. The writer stage of an import.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/fsx"
	"github.com/sessiontree/sessiontree/internal/lines"
	"github.com/sessiontree/sessiontree/jsonl"
)

// outcomeError ends a file's transaction with an outcome other than
// success; it rolls back whatever was written.
type outcomeError struct {
	outcome Outcome
	err     error
}

func (e *outcomeError) Error() string { return e.err.Error() }
func (e *outcomeError) Unwrap() error { return e.err }

func conflict(format string, a ...any) error {
	return &outcomeError{OutcomeConflict, fmt.Errorf("%s: %w", fmt.Sprintf(format, a...), sessiontree.ErrConflict)}
}

// importTuning sizes an import's transactions and batches; the zero
// value of each field means its default (withDefaults). Tests set it
// through ImportOptions to make small files take the paths of large ones.
type importTuning struct {
	// An import commits a file in pieces of at most chunkEntries entries
	// or chunkBytes of the file, each one transaction, so that it never
	// holds the write lock long.
	chunkEntries int
	chunkBytes   int64
	// A one-pass import hands entries to the engine's batch append
	// appendEntries (or appendBytes of them) at a time: few enough that
	// the JSONL reader parses the next ones meanwhile, on another core,
	// and enough to spread each call's fixed costs (reading the session's
	// head, rewriting the active branch).
	appendEntries int
	appendBytes   int
	// afterAppend, when set, is called after each batch of entries a
	// one-pass import appends, inside its transaction.
	afterAppend func()
	// alone imports every file in transactions of its own, none in a
	// group with others (importgroup.go), as imports did before groups;
	// benchmarks compare the two.
	alone bool
	// afterGroup, when set, is called with the number of files each
	// group's transaction imported, after it commits.
	afterGroup func(files int)
	// afterParse, when set, is called once the lines a commit takes are
	// parsed, before the commit is built (the file's record, its hash):
	// tests rewrite the file there.
	afterParse func()
	// readFile, when set, is what each read of a file's new part (a
	// walk) reads it through, instead of the file: tests fail reads.
	readFile func(f *os.File) io.ReaderAt
	// aheadLine bounds the lines of a first pass run ahead (checkAhead).
	aheadLine int
	// afterAhead, when set, is called by the reader goroutine after it
	// ran the first pass of a file ahead, with the file's path, whether
	// the writer takes that pass, and whether the second pass was
	// started ahead too.
	afterAhead func(path string, kept, gathered bool)
}

// withDefaults fills the fields left zero with their defaults.
func (t importTuning) withDefaults() importTuning {
	t.chunkEntries = cmp.Or(t.chunkEntries, 16384)
	t.chunkBytes = cmp.Or(t.chunkBytes, 8<<20)
	t.appendEntries = cmp.Or(t.appendEntries, 1024)
	t.appendBytes = cmp.Or(t.appendBytes, 1<<20)
	t.aheadLine = cmp.Or(t.aheadLine, aheadLineBytes)
	return t
}

// errGiveWay rolls back the transaction of a one-pass import that found
// the file to hold more than a chunk; it never leaves [fileImport.once],
// which returns the decision instead.
var errGiveWay = errors.New("more than one chunk")

// fileImport is one file's import as it goes from transaction to
// transaction.
type fileImport struct {
	s     *Store
	ctx   context.Context
	gate  gate // how its writes wait for another process's
	tune  importTuning
	prog  *progressReport
	base  int64 // bytes imported by the attempts before this one
	path  string
	f     *os.File
	fi    os.FileInfo // the file as the import found it
	mode  jsonl.Mode
	res   *FileResult
	found bool   // the store has a record of the file
	rec   record // that record, as last read or written
	meta  sessiontree.SessionMeta
	start int64           // where this import starts reading
	from  *jsonl.Position // the reader's resume point, nil for a new file
	seed  map[string]uint64
	h     hash.Hash // SHA-256 state after the file's first start bytes
	// unknownAt are the entries of unknown types noted, with their
	// offsets (see attempt).
	unknownAt []unknownAt

	maxLine int  // ImportOptions.MaxLineBytes
	follow  bool // ImportOptions.FollowRewrites
	longest int  // the longest entry read, in bytes of JSON
	// skipped are lines skipped before the import's start (see
	// skipClosedTorn), kept in the result's Problems.
	skipped []*jsonl.LineError
	// ahead is the first pass of twice run ahead of the writer
	// (checkAhead), nil when it was not, or once it is taken.
	ahead *checkedAhead
}

// unknownAt is an entry of a type this version does not know, and where
// it is in the file.
type unknownAt struct {
	offset int64
	typ    sessiontree.EntryType
}

// errMeanwhile says that another import of the same file (another
// process importing the same folder) committed since this one read the
// file's record. The transaction that finds it writes nothing, and
// importFile starts over from what the other import left.
var errMeanwhile = fmt.Errorf("the file was imported by another import meanwhile: %w", sessiontree.ErrConflict)

// maxImportAttempts bounds how many times importFile starts one file
// over; every new start follows a commit of another import to the same
// file, so the bound is met only by imports that keep overtaking each
// other. Past it the file is reported as a conflict.
const maxImportAttempts = 100

// attempt is one run of importAttempt on a file: its result, where it
// began to read the file, whether it created the file's session, and the
// entries of unknown types it noted.
type attempt struct {
	res       FileResult
	start     int64
	resumed   bool // the file had a record when the attempt began
	created   bool
	unknownAt []unknownAt
	base      int64 // bytes the attempts before it imported
	// again says the file is to be imported over, from what another
	// import, or this one following a rewrite, committed since the
	// attempt read the file's record.
	again bool
	// checked is the file opened and its first pass run ahead by the
	// reader goroutine (checkAhead), for the first attempt; nil when
	// the attempt opens the file itself.
	checked *fileImport
}

// importFile imports one file (see importAttempt). Imports of the same
// file running at once meet inside the transactions that write: one that
// finds the file's record changed since it read it starts over, from
// what the other import committed, which mostly leaves it nothing to do.
// So imports of one folder running at once end as one import would, each
// file imported once, and none reports the others' work as a conflict.
// checked, when not nil, is the file opened and checked ahead
// (checkAhead), which the first attempt takes.
func (s *Store) importFile(ctx context.Context, g gate, path string, opts ImportOptions, prog *progressReport, checked *fileImport) FileResult {
	var prev *attempt
	for n := 1; ; n++ {
		a := &attempt{checked: checked}
		checked = nil
		if prev != nil {
			a.base = prev.res.Bytes
		}
		a.res = s.importAttempt(ctx, g, path, opts, prog, a)
		if prev != nil {
			a.after(prev)
		}
		if !a.again || n == maxImportAttempts || ctx.Err() != nil {
			return a.res
		}
		prev = a
	}
}

// after adds to a what prev, the attempt before it, did: the entries and
// bytes it committed, the session if it created it, and what it noted of
// the part of the file before where a began (a notes the rest).
func (a *attempt) after(prev *attempt) {
	a.res.Entries += prev.res.Entries
	a.res.Bytes += prev.res.Bytes
	a.res.Rewritten = a.res.Rewritten || prev.res.Rewritten
	a.res.MovedFrom = cmp.Or(a.res.MovedFrom, prev.res.MovedFrom)
	a.created = a.created || prev.created
	if a.res.Err == nil {
		switch {
		case a.created:
			a.res.Outcome = OutcomeNew
		case a.res.Bytes > 0:
			a.res.Outcome = OutcomeGrown
		}
	}
	var problems []*jsonl.LineError
	for _, p := range prev.res.Problems {
		if p.Offset < a.start {
			problems = append(problems, p)
		}
	}
	a.res.Problems = append(problems, a.res.Problems...)
	var unknown sessiontree.UnknownTypes
	var at []unknownAt
	for _, u := range prev.unknownAt {
		if u.offset < a.start {
			unknown.Note(u.typ)
			at = append(at, u)
		}
	}
	unknown.Merge(a.res.Unknown)
	if len(unknown) > 0 {
		a.res.Unknown = unknown
	}
	a.unknownAt = append(at, a.unknownAt...)
}

// importAttempt imports one file, telling a how. When its new part fits
// in one chunk, as most sessions do, it is read once and committed in one
// transaction (once); a larger file is read twice, checked and then
// committed chunk by chunk (twice). Either way a file the mode refuses
// leaves nothing behind, and an import cut short resumes where its last
// commit ended.
func (s *Store) importAttempt(ctx context.Context, g gate, path string, opts ImportOptions, prog *progressReport, a *attempt) FileResult {
	res := FileResult{Path: path}
	fim, err := s.openAttempt(ctx, a, g, path, opts, prog, &res)
	if fim == nil {
		return a.finish(&res, nil, err)
	}
	defer fim.close()
	if err != nil {
		return a.finish(&res, fim, err)
	}
	fim.base = a.base
	if a.resumed = fim.found; fim.found {
		a.start = fim.rec.ImportedBytes
		res.SessionID = fim.rec.SessionID
		if unchanged, err := fim.resume(a); err != nil || unchanged {
			return a.finish(&res, fim, err)
		}
	}
	err = fim.run()
	var moved *movedError
	if errors.As(err, &moved) {
		err = fim.followRewrite(a, err, moved.from)
	}
	if err != nil {
		return a.finish(&res, fim, err)
	}
	switch {
	case !fim.found || res.Outcome == OutcomeNew:
		res.Outcome = OutcomeNew
	case res.Bytes > 0:
		res.Outcome = OutcomeGrown
	default:
		res.Outcome = OutcomeUnchanged
	}
	return a.finish(&res, fim, nil)
}

// openAttempt opens the file at path for attempt a (openImport), or
// takes the one the reader goroutine opened and checked (a.checked).
func (s *Store) openAttempt(ctx context.Context, a *attempt, g gate, path string, opts ImportOptions, prog *progressReport, res *FileResult) (*fileImport, error) {
	if fim := a.checked; fim != nil {
		fim.adopt(g, prog, res)
		return fim, nil
	}
	return s.openImport(ctx, g, path, opts, prog, res)
}

// openImport opens the file at path for its import, telling res, and
// reads the store's record of it. It returns nil and why when the file
// cannot be opened; else the caller closes the import (close), also when
// the record could not be read (the error then).
func (s *Store) openImport(ctx context.Context, g gate, path string, opts ImportOptions, prog *progressReport, res *FileResult) (*fileImport, error) {
	f, err := fsx.Open(path, os.O_RDONLY, "session file")
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	fim := &fileImport{s: s, ctx: ctx, gate: g, tune: opts.tune.withDefaults(), prog: prog, path: path, f: f, fi: fi, mode: opts.Mode, maxLine: opts.MaxLineBytes, follow: opts.FollowRewrites, res: res, seed: map[string]uint64{}, h: sha256.New()}
	return fim, s.d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		fim.rec, fim.found, err = readRecord(tx, path)
		return err
	})
}

// close closes the import's file, once a second pass started ahead, if
// any, no longer reads it. Nothing holds the file's entries once
// it is closed: a huge one's memory goes back at once, before the next
// file or the search index's catch-up, which has SQLite read the entry
// again.
func (fim *fileImport) close() {
	fim.ahead.stop()
	fim.f.Close()
	lines.Dropped(fim.longest)
}

// resume prepares the import of a file imported before: it checks that
// the imported part is unchanged, and, unless the whole file is
// (unchanged, the result's outcome then), the file's session, and moves
// the reader to where the last import ended.
func (fim *fileImport) resume(a *attempt) (unchanged bool, err error) {
	rec := fim.rec
	if fim.h, err = checkPrefix(fim.f, rec, fim.fi.Size()); err != nil {
		return false, fim.followRewrite(a, err, "")
	}
	if rec.unchangedAt(fim.fi) {
		fim.res.Outcome = OutcomeUnchanged
		return true, nil
	}
	fim.start = rec.ImportedBytes
	pos := rec.Position
	fim.from = &pos
	if err := fim.loadSession(); err != nil {
		return false, err
	}
	return false, fim.skipClosedTorn()
}

// finish ends the attempt with err (nil when it succeeded), telling a what
// fim (nil when the file could not be opened) did, and returns the file's
// result: an outcomeError gives its outcome, another error fails the
// file, and a file that imported nothing reports none of its lines.
func (a *attempt) finish(res *FileResult, fim *fileImport, err error) FileResult {
	if fim != nil {
		a.created = !a.resumed && fim.found
		a.unknownAt = fim.unknownAt
	}
	a.again = a.again || errors.Is(err, errMeanwhile)
	var oe *outcomeError
	switch {
	case err == nil:
	case errors.As(err, &oe):
		res.Outcome, res.Err = oe.outcome, fmt.Errorf("import %s: %w", res.Path, oe.err)
	default:
		res.Outcome, res.Err = OutcomeFailed, fmt.Errorf("import %s: %w", res.Path, err)
	}
	if res.Err != nil && res.Entries == 0 {
		res.Problems, res.Torn, res.Unknown, a.unknownAt = nil, nil, nil, nil
	}
	return *res
}

// loadSession checks the session of a file imported before and reads its
// entry ids.
func (fim *fileImport) loadSession() error {
	ctx, rec := fim.ctx, fim.rec
	return fim.s.d.View(ctx, func(tx sessiontree.DatabaseTx) error {
		clear(fim.seed)
		if _, _, err := fim.recheck(tx); err != nil {
			return err
		}
		count, err := tx.SessionEntryCount(rec.SessionID)
		if err != nil {
			return err
		}
		if count != rec.SessionEntries {
			return conflict("session %s has %d entries, %d when the file was imported: it was written to in the store since, so the file's new lines are not merged",
				rec.SessionID, count, rec.SessionEntries)
		}
		ids, err := tx.SessionEntryIDs(rec.SessionID)
		for _, id := range ids {
			fim.seed[id] = 0
		}
		return err
	})
}

// takeHeader takes the session of a new file from its header (header)
// and refuses it when the store has that session already; tx is a
// transaction that sees the store as the import will write to it.
func (fim *fileImport) takeHeader(tx sessiontree.DatabaseTx, h jsonl.Header) error {
	if _, _, err := fim.recheck(tx); err != nil {
		return err
	}
	if err := fim.header(h); err != nil {
		return err
	}
	return fim.claim(tx)
}

// claim refuses the session taken from a new file's header (header) when
// the store has it already, as tx sees the store.
func (fim *fileImport) claim(tx sessiontree.DatabaseTx) error {
	if taken, err := tx.SessionExists(fim.meta.ID); err != nil || !taken {
		return err
	}
	other := "the store"
	if p, ok, err := tx.ImportPathOf(fim.meta.ID); err == nil && ok {
		other = p
		if _, err := os.Lstat(p); fim.follow && errors.Is(err, fs.ErrNotExist) {
			return &movedError{from: p}
		}
	}
	return conflict("session %s is already in the store (from %s)", fim.meta.ID, other)
}

// header takes the session of a new file from its header, or refuses a
// header no engine may store (sessiontree.CheckSessionMeta), at the
// file's first line.
func (fim *fileImport) header(h jsonl.Header) error {
	if err := sessiontree.CheckSessionMeta(h.SessionMeta); err != nil {
		return &jsonl.LineError{Path: fim.path, Line: 1, Err: err}
	}
	fim.meta = h.SessionMeta
	fim.meta.Version = jsonl.CurrentVersion // entries are migrated to it
	fim.res.SessionID = fim.meta.ID
	return nil
}

// run imports what is new in the file, by the plan its size calls for: a
// new part that fits in one chunk is read once (once), a larger one, or
// one that turns out to hold more entries than a chunk, twice (twice).
func (fim *fileImport) run() error {
	if fim.ahead != nil {
		return fim.twiceChecked()
	}
	if fim.fi.Size()-fim.start <= fim.tune.chunkBytes {
		done, err := fim.once()
		if err != nil || done {
			return err
		}
	}
	return fim.twice()
}

// progress reports that done bytes of the file are imported so far.
func (fim *fileImport) progress(done int64) { fim.prog.file(fim.path, fim.base+done) }

// once imports a file whose new part fits in one chunk in one pass and
// one transaction: entries are checked and appended as the reader yields
// them, while it parses the next ones. A file the mode refuses rolls the
// transaction back, so it leaves nothing behind, as in two passes. When
// the file turns out to hold more than a chunk (it grew since it was
// measured, or has many small entries) once returns done false, having
// written nothing: the file is for two passes.
func (fim *fileImport) once() (done bool, err error) {
	var p *onePass
	err = fim.gate.write(fim.ctx, func(tx sessiontree.DatabaseTx) error {
		// The transaction may run more than once: start afresh.
		fim.restart()
		p = &onePass{fim: fim, tx: tx, oneRead: oneRead{tee: fim.prefixHash(), pos: fim.resumeAt(), consumed: fim.start}}
		return p.run()
	})
	if p != nil && p.full {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	fim.res.Entries, fim.res.Bytes = p.entries, p.rec.ImportedBytes-fim.start
	fim.committed(p.rec)
	fim.progress(fim.res.Bytes)
	return true, nil
}

// oneRead is where a read of a file in one pass is: the entries taken
// and not yet appended, and how far the import reaches.
type oneRead struct {
	tee        *prefixHash // hashes the file as it is read
	entries    int         // entries appended so far
	batch      []sessiontree.Entry
	batchBytes int
	pos        jsonl.Position // where the import ends so far
	consumed   int64
}

// take takes one record of fim's walk (see [fileImport.walk]) into the
// read, and tells whether the file turned out to hold more than a chunk
// (the read then gives way to two passes).
func (o *oneRead) take(fim *fileImport, r jsonl.Record, skip *jsonl.LineError) (full bool) {
	fim.note(r, skip)
	if r.Kind == jsonl.KindTorn {
		return false
	}
	if r.Kind == jsonl.KindEntry && skip == nil {
		o.batch = append(o.batch, r.Entry)
		o.batchBytes += len(r.Entry.Raw)
	}
	o.pos, o.consumed = r.Next, r.Next.Offset
	o.tee.consumed(o.consumed)
	return o.entries+len(o.batch) > fim.tune.chunkEntries || o.consumed-fim.start > fim.tune.chunkBytes
}

// hash returns the hash state after the bytes the read consumed.
func (o *oneRead) hash() (hash.Hash, error) { return o.tee.at(o.consumed) }

// onePass is a one-pass import in its transaction.
type onePass struct {
	oneRead
	fim   *fileImport
	tx    sessiontree.DatabaseTx
	st    sessiontree.DatabaseSession
	count int64  // the session's entries before the import
	rec   record // the file's record, once written
	full  bool   // the file holds more than a chunk: give way
}

// run reads the file, appending its entries, and records it.
func (p *onePass) run() error {
	err := p.fim.walk(-1, p.tee, p.visit)
	if err == nil {
		err = p.fim.headerRead()
	}
	if err == nil {
		err = p.flush()
	}
	if err == nil {
		err = p.record()
	}
	return err
}

// visit takes one record of the walk: the header, a line tolerated, an
// entry to append. It gives way to two passes as soon as the file is
// found to hold more than a chunk, before appending beyond it.
func (p *onePass) visit(r jsonl.Record, skip *jsonl.LineError) error {
	fim := p.fim
	if r.Kind == jsonl.KindHeader {
		if err := fim.takeHeader(p.tx, r.Header); err != nil {
			return err
		}
	}
	switch {
	case p.take(fim, r, skip):
		p.full = true
		return errGiveWay
	case len(p.batch) >= fim.tune.appendEntries || p.batchBytes >= fim.tune.appendBytes:
		return p.flush()
	}
	return nil
}

// flush appends the entries waiting, to the session it opens (or
// creates) first.
func (p *onePass) flush() error {
	if p.st == nil {
		var err error
		if p.st, p.count, err = p.fim.session(p.tx); err != nil {
			return err
		}
	}
	if len(p.batch) > 0 {
		if err := p.tx.AppendEntries(p.st, p.batch); err != nil {
			return err
		}
		p.entries += len(p.batch)
		if hook := p.fim.tune.afterAppend; hook != nil {
			hook()
		}
	}
	p.batch, p.batchBytes = dropBatch(p.batch), 0
	return nil
}

// record writes the file's record.
func (p *onePass) record() error {
	p.fim.parsed()
	h, err := p.hash()
	if err != nil {
		return err
	}
	p.rec = newRecord(p.st.ID(), p.consumed, p.pos, h, p.count+int64(p.entries))
	return p.fim.save(p.tx, &p.rec, true)
}

// twice imports a file in two passes. The first reads what is new and
// checks it all, writing nothing, so that a file the mode refuses leaves
// nothing behind. The second reads the same bytes again and commits them
// chunk by chunk, each chunk with the file's record, so that an import
// cut short (a crash, a cancellation) resumes where its last chunk ended.
func (fim *fileImport) twice() error {
	fim.restart()
	end, err := fim.check()
	if err != nil {
		return err
	}
	return fim.commit(end)
}

// check is the first pass of twice: it reads and checks everything new,
// writes nothing, and returns how far the second pass is to read.
func (fim *fileImport) check() (int64, error) {
	end := fim.start
	err := fim.walk(-1, nil, func(r jsonl.Record, skip *jsonl.LineError) error {
		if r.Kind == jsonl.KindHeader {
			if err := fim.checkHeader(r.Header); err != nil {
				return err
			}
		}
		fim.note(r, skip)
		if r.Kind != jsonl.KindTorn {
			end = r.Next.Offset
		}
		return nil
	})
	if err == nil {
		err = fim.headerRead()
	}
	return end, err
}

// commit is the second pass of twice: it reads the file again up to end
// and commits it a chunk at a time. A goroutine reads and gathers the
// next chunk (gather) while this one commits the one before
// (commitChunks): the parse of a chunk and the writes of the one before
// take turns no more, which left the writer idle for most of a chunk's
// parse. At most chunksHeld chunks are held, gathered and not yet
// committed: one committed while the next is gathered, or, when the
// second pass started ahead (checkAhead), two gathered while the writer
// is still on other files. The
// chunks committed are those before the first error either meets, as
// when one goroutine read and committed them in turn.
func (fim *fileImport) commit(end int64) error {
	return fim.commitGathered(fim.gatherTo(end))
}

// commitGathered commits the chunks g gathers, and stops it.
func (fim *fileImport) commitGathered(g *gathering) error {
	err := fim.commitChunks(g)
	return cmpErr(err, g.end())
}

// chunksHeld is how many chunks of a file its second pass holds at most,
// gathered and not yet committed.
const chunksHeld = 2

// gathering is a goroutine gathering a file's chunks (gather): it sends
// them to chunks, until stop is closed, then its error to gathered. A
// chunk holds one of slots from its first entry until it is committed.
type gathering struct {
	chunks   chan gatheredChunk
	slots    chan struct{}
	stop     chan struct{}
	gathered chan error
}

// gatherTo starts a goroutine gathering the file's chunks up to end.
func (fim *fileImport) gatherTo(end int64) *gathering {
	g := &gathering{chunks: make(chan gatheredChunk, chunksHeld-1), slots: make(chan struct{}, chunksHeld), stop: make(chan struct{}), gathered: make(chan error, 1)}
	go func() {
		defer close(g.chunks)
		g.gathered <- fim.gather(end, g)
	}()
	return g
}

// end stops the gathering, unless it has finished, waits for it and
// returns its error. The chunks it gathered and no one took are dropped.
func (g *gathering) end() error {
	close(g.stop)
	for range g.chunks { // the goroutine has finished once it is closed
	}
	return <-g.gathered
}

// gather reads the file from the import's start up to end, checking it,
// and sends its chunks to g, until g is stopped.
func (fim *fileImport) gather(end int64, g *gathering) error {
	c := &chunker{fim: fim, tee: fim.prefixHash(), pos: fim.resumeAt(), consumed: fim.start, chunkStart: fim.start, g: g}
	if err := c.reserve(); err != nil {
		return err
	}
	if err := fim.walk(end-fim.start, c.tee, c.visit); err != nil {
		return err
	}
	return c.flush(true)
}

// reserve waits for a slot for the chunk the chunker gathers next,
// unless the gathering is stopped.
func (c *chunker) reserve() error {
	select {
	case c.g.slots <- struct{}{}:
		return nil
	case <-c.g.stop:
		return errStopped
	}
}

// commitChunks commits the chunks g gathers, in order.
func (fim *fileImport) commitChunks(g *gathering) error {
	for c := range g.chunks {
		err := fim.chunk(c.entries, c.pos, c.consumed, c.h, c.final)
		<-g.slots
		if err != nil {
			return err
		}
		fim.res.Entries += len(c.entries)
		fim.res.Bytes = c.consumed - fim.start
		dropBatch(c.entries)
		fim.progress(fim.res.Bytes)
	}
	return nil
}

// gatheredChunk is a chunk of a file read and checked, to commit: its
// entries, where it ends (pos, consumed), the hash state after it, and
// whether it is the file's last.
type gatheredChunk struct {
	entries  []sessiontree.Entry
	pos      jsonl.Position
	consumed int64
	h        hash.Hash
	final    bool
}

// errStopped ends a gather whose chunks are no longer committed.
var errStopped = errors.New("the chunks are no longer committed")

// chunker is the second pass of a two-pass import as it reads the file:
// it gathers the entries of a chunk and hands them over to commit.
type chunker struct {
	fim        *fileImport
	tee        *prefixHash // hashes the file as it is read
	batch      []sessiontree.Entry
	pos        jsonl.Position // where the chunk ends so far
	consumed   int64
	chunkStart int64
	g          *gathering // where the chunks go
}

// visit takes one record of the walk, and hands the chunk over once it
// is full.
func (c *chunker) visit(r jsonl.Record, skip *jsonl.LineError) error {
	select {
	case <-c.g.stop:
		return errStopped
	default:
	}
	if r.Kind == jsonl.KindTorn {
		return nil
	}
	if r.Kind == jsonl.KindEntry && skip == nil {
		c.batch = append(c.batch, r.Entry)
	}
	c.pos, c.consumed = r.Next, r.Next.Offset
	c.tee.consumed(c.consumed)
	if len(c.batch) >= c.fim.tune.chunkEntries || c.consumed-c.chunkStart >= c.fim.tune.chunkBytes {
		c.chunkStart = c.consumed
		return c.flush(false)
	}
	return nil
}

// flush hands the chunk gathered over to be committed; final says it is
// the file's last.
func (c *chunker) flush(final bool) error {
	c.fim.parsed()
	h, err := c.tee.at(c.consumed)
	if err != nil {
		return err
	}
	select {
	case c.g.chunks <- gatheredChunk{entries: c.batch, pos: c.pos, consumed: c.consumed, h: h, final: final}:
	case <-c.g.stop:
		return errStopped
	}
	c.batch = make([]sessiontree.Entry, 0, len(c.batch))
	if final {
		return nil
	}
	return c.reserve()
}

// chunk commits entries, the file's bytes up to consumed (h: the hash
// state after them), in one transaction with the file's record: the
// session (created by the first chunk of a new file) and where the next
// import resumes (pos).
func (fim *fileImport) chunk(entries []sessiontree.Entry, pos jsonl.Position, consumed int64, h hash.Hash, final bool) error {
	var rec record
	err := fim.gate.write(fim.ctx, func(tx sessiontree.DatabaseTx) error {
		st, count, err := fim.session(tx)
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			if err := tx.AppendEntries(st, entries); err != nil {
				return err
			}
		}
		rec = newRecord(st.ID(), consumed, pos, h, count+int64(len(entries)))
		return fim.save(tx, &rec, final)
	})
	if err != nil {
		return err
	}
	fim.committed(rec)
	return nil
}

// session opens the file's session in tx for this import's entries,
// creating the session of a new file, after checking that neither the
// file's record nor the session changed since the import read them. It
// returns the session and its entry count.
func (fim *fileImport) session(tx sessiontree.DatabaseTx) (sessiontree.DatabaseSession, int64, error) {
	cur, found, err := fim.recheck(tx)
	if err != nil {
		return nil, 0, err
	}
	var st sessiontree.DatabaseSession
	if !found {
		if st, err = tx.NewSession(fim.meta, nil); err != nil {
			if errors.Is(err, sessiontree.ErrConflict) {
				return nil, 0, conflict("session %s is already in the store", fim.meta.ID)
			}
			return nil, 0, err
		}
	} else if st, err = tx.Session(cur.SessionID); err != nil {
		return nil, 0, err
	}
	if !found {
		return st, 0, nil
	}
	count, err := tx.SessionEntryCount(cur.SessionID)
	if err != nil {
		return nil, 0, err
	}
	if count != cur.SessionEntries {
		return nil, 0, conflict("session %s was written to in the store meanwhile", cur.SessionID)
	}
	return st, count, nil
}

// parsed says that the lines a commit takes are parsed (see
// importTuning.afterParse).
func (fim *fileImport) parsed() {
	if hook := fim.tune.afterParse; hook != nil {
		hook()
	}
}
