package pgengine

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// A batch (an import, a push) is checked and placed in memory and stored
// in a few COPY statements, instead of the two to four statements
// per entry of [Storage.Append]: the checks are the root's replay
// (sessiontree.Replayer), the placement sessiontree.Place with this
// package's setters, and the branch table is rewritten once, for the
// batch's final leaf. The append-only triggers and the unique id index
// hold for these rows as for any other.

// Batch statement sizes: a COPY carries at most batchRows entries or
// about batchBytes of JSON, so a batch's first rows reach the server
// while its later entries are placed (batchWriter), and the rows held
// for a statement stay bounded whatever the batch's length.
const (
	batchRows  = 4096
	batchBytes = 4 << 20
)

// AppendBatch stores entries that carry their own ids, parents and
// timestamps, in order, in one transaction; the leaf follows the leaf
// rule over them. Nothing of a refused batch is kept.
func (s *Storage) AppendBatch(ctx context.Context, entries []sessiontree.Entry) error {
	return s.write(ctx, "append batch", s.batchOf(ctx, entries))
}

// appendBatch is AppendBatch in a transaction of the caller's
// ([Tx.AppendEntries]).
func (s *Storage) appendBatch(ctx context.Context, tx *sqlx.Tx, entries []sessiontree.Entry) error {
	return s.writeIn(ctx, tx, s.batchOf(ctx, entries))
}

// batchOf is a write storing entries as a batch, counted for the
// statistics check after the commit (analyze.go).
func (s *Storage) batchOf(ctx context.Context, entries []sessiontree.Entry) func(tx *sqlx.Tx, st *session) error {
	return func(tx *sqlx.Tx, st *session) error {
		if err := st.addBatch(ctx, s.db, tx, entries); err != nil {
			return err
		}
		s.db.bulk.add(s.pk, len(entries))
		return nil
	}
}

// addBatch checks, places and stores entries under st in tx.
func (st *session) addBatch(ctx context.Context, db *DB, tx *sqlx.Tx, entries []sessiontree.Entry) error {
	b := &batch{ctx: ctx, db: db, tx: tx, st: st, entries: entries, local: make(map[string]int, len(entries))}
	return b.run()
}

// batch is one AppendBatch in its transaction.
type batch struct {
	ctx     context.Context
	db      *DB
	tx      *sqlx.Tx
	st      *session
	entries []sessiontree.Entry
	// local maps an id of the batch to its index; places and parents are
	// by index: the entry's placement and its parent's index (-1 for a
	// root or a parent stored before the batch).
	local   map[string]int
	places  []placement
	parents []int
	// parentSeqs are the entries' parents' seqs (NULL for a root), for
	// their rows.
	parentSeqs []pgtype.Int8
	// txMu orders the uses of tx while the rows are stored
	// (batchWriter): the placement's reads of entries stored before the
	// batch and the writer's statements. database/sql locks the
	// connection for each call only, so without it a COPY could start
	// between a read's query and the end of its rows, which pgx refuses
	// (its connection busy).
	txMu sync.Mutex
	// stored caches placements of entries stored before the batch that
	// the batch names; storedIDs are the batch's ids already stored.
	stored    map[string]placement
	storedIDs map[string]bool
	// hasChild holds the seqs of the entries that have a child other
	// than a leaf entry, as far as the batch knows: the batch's parents
	// so far, and the stored ones it looked up (tree counts, shape.go).
	hasChild map[int64]bool
}

// run checks and places every entry, stores them, moves the branch to the
// final leaf and notes each entry in the session's row.
func (b *batch) run() error {
	// Before any query: an id the database cannot hold as text would
	// fail findStoredIDs' with a driver error naming no entry.
	for i, e := range b.entries {
		if err := storable(e); err != nil {
			return fmt.Errorf("batch entry %d: %w", i+1, err)
		}
	}
	if err := b.findStoredIDs(); err != nil {
		return err
	}
	base := b.st.count
	b.places = make([]placement, len(b.entries))
	b.parents = make([]int, len(b.entries))
	b.parentSeqs = make([]pgtype.Int8, len(b.entries))
	w := b.startWriter()
	defer w.stop()
	var replay sessiontree.Replayer
	replay.Leaf = b.st.leafID.String
	size := 0
	from := 0
	for i, e := range b.entries {
		if i%1024 == 0 {
			if err := b.ctx.Err(); err != nil {
				return err
			}
		}
		if err := b.placeEntry(&replay, i, base+int64(i)+1); err != nil {
			// A statement's error aborts the transaction, and with it a
			// read of the placement: the statement's is the cause.
			return cmp.Or(w.failure(), fmt.Errorf("batch entry %d: %w", i+1, err))
		}
		w.facts[i] = sessiontree.FactsOf(e)
		size += len(e.Raw)
		if i+1-from >= cmp.Or(b.db.opts.batchRows, batchRows) || size >= batchBytes || i == len(b.entries)-1 {
			if err := w.store(from, i+1); err != nil {
				return err
			}
			from, size = i+1, 0
		}
	}
	if err := w.finish(); err != nil {
		return err
	}
	if err := b.moveBranch(replay.Leaf); err != nil {
		return err
	}
	for i, e := range b.entries {
		e.Seq = b.places[i].Seq // a label row names its entry
		if err := b.st.noteStats(b.ctx, b.tx, e, w.facts[i].Stats); err != nil {
			return fmt.Errorf("batch entry %d: %w", i+1, err)
		}
	}
	return nil
}

// findStoredIDs reads which of the batch's ids the session holds already,
// in one query, so the replay reports a duplicate at its entry (a unique
// violation would abort the transaction before it could be named).
func (b *batch) findStoredIDs() error {
	if b.st.count == 0 {
		return nil
	}
	ids := make([]string, len(b.entries))
	for i, e := range b.entries {
		ids[i] = e.ID
	}
	var dup []string
	if err := b.tx.SelectContext(b.ctx, &dup, `SELECT id FROM entries WHERE session = $1 AND id = ANY($2)`, b.st.pk, ids); err != nil {
		return err
	}
	b.storedIDs = make(map[string]bool, len(dup))
	for _, id := range dup {
		b.storedIDs[id] = true
	}
	return nil
}

// placeEntry checks entry i through the replay and computes its
// placement with sequence number seq.
func (b *batch) placeEntry(replay *sessiontree.Replayer, i int, seq int64) error {
	e := b.entries[i]
	if err := e.Validate(); err != nil {
		return err
	}
	if b.storedIDs[e.ID] {
		return &sessiontree.IDTakenError{ID: e.ID}
	}
	f := sessiontree.EffectsOf(e, sessiontree.MessageInfoOf(e).Role) // the settings too, as an Append's facts
	if err := sessiontree.CheckBatchEntry(e, &f, batchEarlier{b}); err != nil {
		return err
	}
	replay.Apply(e, &f)
	var parent *sessiontree.Placement
	b.parents[i] = -1
	if e.ParentID != "" {
		p, j, err := b.find(e.ParentID)
		if err != nil {
			return err
		}
		b.parents[i] = j
		b.parentSeqs[i] = int8Of(p.Seq)
		rp := p.root()
		parent = &rp
	}
	p, err := sessiontree.Place(e, &f, seq, parent, func(id string) (int64, error) { return b.ancestorDepth(i, id) })
	if err != nil {
		return err
	}
	b.places[i] = fromRoot(p)
	b.places[i].Leaf = e.Type == sessiontree.TypeLeaf
	b.local[e.ID] = i
	return b.countEntry(i, seq)
}

// countEntry counts entry i, of sequence number seq, into the row's tree
// counts: whether its parent had a child is known for a parent of the
// batch (b.hasChild), looked up once for a stored one.
func (b *batch) countEntry(i int, seq int64) error {
	e := b.entries[i]
	var parent *placement
	if e.ParentID != "" {
		if j := b.parents[i]; j >= 0 {
			parent = &b.places[j]
		} else {
			p := b.stored[e.ParentID]
			parent = &p
		}
	}
	if b.hasChild == nil {
		b.hasChild = map[int64]bool{}
	}
	had := false
	if needsChildLookup(e.Type, parent, seq) {
		var known bool
		if had, known = b.hasChild[parent.Seq]; !known && b.parents[i] < 0 {
			var err error
			if err = b.read(func() (err error) {
				had, err = hadChild(b.ctx, b.tx, b.st.pk, parent.Seq)
				return err
			}); err != nil {
				return err
			}
		}
	}
	rooted := parent == nil || parent.Leaf
	if e.Type != sessiontree.TypeLeaf && !rooted {
		b.hasChild[parent.Seq] = true
	}
	b.st.shape.AddEntry(e.Type, rooted, had)
	return nil
}

// read runs fn, a read of the batch's transaction while it is placed,
// in turn with the writer's statements.
func (b *batch) read(fn func() error) error {
	b.txMu.Lock()
	defer b.txMu.Unlock()
	return fn()
}

// find returns the placement of entry id, of the batch (with its index)
// or stored before it (index -1); the replay checked that it exists.
func (b *batch) find(id string) (placement, int, error) {
	if j, ok := b.local[id]; ok {
		return b.places[j], j, nil
	}
	p, ok, err := b.storedPlacement(id)
	if err == nil && !ok {
		err = &sessiontree.EntryNotFoundError{ID: id}
	}
	return p, -1, err
}

// storedPlacement reads (once) the placement of an entry stored before
// the batch.
func (b *batch) storedPlacement(id string) (placement, bool, error) {
	if p, ok := b.stored[id]; ok {
		return p, true, nil
	}
	if b.st.count == 0 {
		return placement{}, false, nil
	}
	var p placement
	var ok bool
	err := b.read(func() (err error) {
		p, ok, err = placementOf(b.ctx, b.tx, b.st.pk, id)
		return err
	})
	if ok {
		if b.stored == nil {
			b.stored = map[string]placement{}
		}
		b.stored[id] = p
	}
	return p, ok, err
}

// ancestorDepth is the depth of entry id when it is an ancestor of entry
// i (its parent included), else 0: the walk goes up the batch in memory
// and, where it leaves the batch, up the stored tree in one query.
func (b *batch) ancestorDepth(i int, id string) (int64, error) {
	k, _, err := b.find(id)
	if errors.Is(err, sessiontree.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	e := b.entries[i]
	if e.ParentID == "" {
		return 0, nil
	}
	cur, j, err := b.find(e.ParentID)
	if err != nil {
		return 0, err
	}
	for j >= 0 && cur.Depth > k.Depth {
		if pj := b.parents[j]; pj >= 0 {
			cur, j = b.places[pj], pj
			continue
		}
		pid := b.entries[j].ParentID
		if pid == "" {
			return 0, nil
		}
		cur, j = b.stored[pid], -1
	}
	if cur.Depth > k.Depth {
		// Stored from here up: the database walks the rest.
		var seq int64
		err := b.read(func() error { return b.tx.GetContext(b.ctx, &seq, ancestorQuery, b.st.pk, cur.Seq, k.Depth) })
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		cur.Seq, cur.Depth = seq, k.Depth
	}
	if cur.Depth != k.Depth || cur.Seq != k.Seq {
		return 0, nil
	}
	return int64(k.Depth), nil
}

// ancestorQuery is the seq of the ancestor at depth $3 of stored entry
// $2, walking parent ids up one depth at a time.
const ancestorQuery = `WITH RECURSIVE up (seq, parent_id, depth) AS (
    SELECT seq, parent_id, depth FROM entries WHERE session = $1 AND seq = $2
  UNION ALL
    SELECT e.seq, e.parent_id, e.depth FROM up JOIN entries e ON e.session = $1 AND e.id = up.parent_id AND e.depth = up.depth - 1
    WHERE up.depth > $3
)
SELECT seq FROM up WHERE depth = $3`

// batchEarlier is what the replay knows of the entries before each one:
// the batch's so far and the session's stored ones.
type batchEarlier struct{ b *batch }

// Taken answers for the batch only: placeEntry refuses an id stored
// before it first.
func (e batchEarlier) Taken(id string) bool {
	_, ok := e.b.local[id]
	return ok
}

func (e batchEarlier) Exists(id string) (bool, error) {
	if _, ok := e.b.local[id]; ok {
		return true, nil
	}
	_, ok, err := e.b.storedPlacement(id)
	return ok, err
}

// batchWriter stores a batch's rows, a statement per batchRows entries or
// batchBytes of JSON, on a goroutine of its own: while the server
// inserts one statement's rows, the batch places the entries after them
// and reads their facts (their stats, target and checksum: their JSON
// scanned). The placement reads the database only for entries stored
// before the batch; those reads and the writer's statements take turns
// on the transaction (batch.txMu), which is one connection.
type batchWriter struct {
	b *batch
	// facts are the entries' facts, each written by the batch before it
	// hands the entry's row to the writer.
	facts  []sessiontree.Facts
	todo   chan [2]int   // ranges of entries placed, to store in order
	closed bool          // todo is closed
	done   chan struct{} // closed when the goroutine has ended
	// err is the first statement's error, read after done is closed or
	// through failed.
	err    error
	failed chan struct{} // closed on the first error
}

// startWriter starts the goroutine storing the batch's rows.
func (b *batch) startWriter() *batchWriter {
	w := &batchWriter{b: b, facts: make([]sessiontree.Facts, len(b.entries)),
		todo: make(chan [2]int, 1), done: make(chan struct{}), failed: make(chan struct{})}
	go w.run(w.todo)
	return w
}

func (w *batchWriter) run(todo <-chan [2]int) {
	defer close(w.done)
	var c entryColumns
	for r := range todo {
		if w.err != nil {
			continue // the batch stops at its next store
		}
		for i := r[0]; i < r[1]; i++ {
			c.add(w.b.entries[i], rowOf(&w.facts[i]), w.b.places[i], w.b.parentSeqs[i])
		}
		w.b.txMu.Lock()
		err := w.b.copyRows(&c)
		w.b.txMu.Unlock()
		c.reset()
		if err != nil {
			w.err = err
			close(w.failed)
		}
	}
}

// store hands entries from to to (placed) to the writer; it returns the
// error of a statement before, which ends the batch.
func (w *batchWriter) store(from, to int) error {
	select {
	case w.todo <- [2]int{from, to}:
		return nil
	case <-w.failed:
		return w.err // written before failed is closed
	}
}

// failure is the error of a statement that failed so far, nil if none.
func (w *batchWriter) failure() error {
	select {
	case <-w.failed:
		return w.err
	default:
		return nil
	}
}

// finish waits until every row handed to the writer is stored.
func (w *batchWriter) finish() error {
	w.stop()
	return w.err
}

// stop ends the writer once the rows handed to it are stored (or one
// statement failed) and waits for it: the transaction is the caller's
// again. Calling it again does nothing.
func (w *batchWriter) stop() {
	if !w.closed {
		close(w.todo)
		w.closed = true
	}
	<-w.done
}

// entriesInsert and entriesArrays are an insert of entries rows given
// as one array per column: the arrays $2 to $15 (entryColumns.arrays)
// after the session.
const (
	entriesInsert = `INSERT INTO entries (session, seq, id, parent_id, parent_seq, type, timestamp,
	depth, start_depth, thinking_seq, model_seq, tools_seq, target_id, raw, checksum)`
	entriesArrays = `$2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[],
	$8::integer[], $9::integer[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[], $14::text[], $15::bigint[]`
)

// copyRows stores c's rows, of the batch's session, with COPY: the
// rows stream to the server as pgx encodes them, which the server
// stores without an array to build and take apart (an INSERT from
// column arrays took twice as long for rows of this size).
func (b *batch) copyRows(c *entryColumns) error {
	return b.db.rawOf(b.tx, func(conn *pgx.Conn) error {
		_, err := conn.CopyFrom(b.ctx, pgx.Identifier{"entries"}, entriesCopied[:], &entryRows{c: c, session: int8Of(b.st.pk), i: -1})
		return err
	})
}

// entriesCopied are the columns copyRows fills, in entryRows' order.
var entriesCopied = [...]string{"session", "seq", "id", "parent_id", "parent_seq", "type", "timestamp",
	"depth", "start_depth", "thinking_seq", "model_seq", "tools_seq", "target_id", "raw", "checksum"}

// entryRows are the rows of entryColumns as pgx.CopyFromSource, each
// value a pointer into the columns (a value boxed in an interface would
// be an allocation per value).
type entryRows struct {
	c       *entryColumns
	session pgtype.Int8
	i       int
	row     [len(entriesCopied)]any
}

func (r *entryRows) Next() bool {
	r.i++
	return r.i < len(r.c.seq)
}

func (r *entryRows) Values() ([]any, error) {
	c, i := r.c, r.i
	r.row = [...]any{&r.session, &c.seq[i], &c.id[i], &c.parentID[i], &c.parentSeq[i], &c.typ[i], &c.ts[i],
		&c.depth[i], &c.start[i], &c.thinking[i], &c.model[i], &c.tools[i], &c.targetID[i], &c.raw[i], &c.checksum[i]}
	return r.row[:], nil
}

func (r *entryRows) Err() error { return nil }

// insertGroupEntries stores rows of several sessions, theirs in the
// array $1, and extends each one's branch with its row (a group's
// entries, none a leaf entry: group.go).
const insertGroupEntries = `WITH e AS (` + entriesInsert + ` SELECT * FROM unnest($1::bigint[], ` + entriesArrays + `)
	RETURNING session, depth, seq) INSERT INTO branch (session, depth, seq) SELECT session, depth, seq FROM e`

// entryColumns are rows of entries as column arrays for copyRows,
// and their sessions for insertGroupEntries (addTo). Its columns hold
// values that pgx encodes through pointers into them (column), NULL as
// an invalid one, and the raw JSON as the entry's own bytes, so adding a
// row allocates nothing once the arrays have grown (reset keeps them
// for the next rows).
type entryColumns struct {
	session, seq, parentSeq         column[pgtype.Int8]
	id, typ, ts, parentID, targetID column[pgtype.Text]
	raw                             pgtype.FlatArray[[]byte]
	depth, start                    column[pgtype.Int8]
	thinking, model, tools          column[pgtype.Int8]
	checksum                        column[pgtype.Int8]
}

// rowFacts are the facts of an entry (sessiontree.Facts) that its row
// keeps beyond its placement: kept with a pipelined write until its
// group is sent, without the rest.
type rowFacts struct {
	target   string
	checksum int64
}

func rowOf(f *sessiontree.Facts) rowFacts { return rowFacts{target: f.TargetID, checksum: f.Checksum} }

func (c *entryColumns) add(e sessiontree.Entry, r rowFacts, p placement, parentSeq pgtype.Int8) {
	c.seq = append(c.seq, int8Of(p.Seq))
	c.id = append(c.id, textOf(e.ID))
	c.parentID = append(c.parentID, nullable(e.ParentID))
	c.parentSeq = append(c.parentSeq, parentSeq)
	c.typ = append(c.typ, textOf(string(e.Type)))
	c.ts = append(c.ts, textOf(e.Timestamp))
	c.depth = append(c.depth, int8Of(int64(p.Depth)))
	c.start = append(c.start, int8Of(int64(p.StartDepth)))
	c.thinking = append(c.thinking, nullInt(p.Thinking))
	c.model = append(c.model, nullInt(p.Model))
	c.tools = append(c.tools, nullInt(p.Tools))
	c.targetID = append(c.targetID, nullable(r.target))
	c.raw = append(c.raw, e.Raw)
	c.checksum = append(c.checksum, int8Of(r.checksum))
}

// addTo adds e of session, whose row keeps r, placed at p under parent
// (nil: a root).
func (c *entryColumns) addTo(session int64, e sessiontree.Entry, r rowFacts, p placement, parent *placement) {
	var parentSeq pgtype.Int8
	if parent != nil {
		parentSeq = int8Of(parent.Seq)
	}
	c.session = append(c.session, int8Of(session))
	c.add(e, r, p, parentSeq)
}

// reset empties c, keeping its arrays' room.
func (c *entryColumns) reset() {
	clear(c.raw)
	*c = entryColumns{c.session[:0], c.seq[:0], c.parentSeq[:0],
		c.id[:0], c.typ[:0], c.ts[:0], c.parentID[:0], c.targetID[:0], c.raw[:0],
		c.depth[:0], c.start[:0], c.thinking[:0], c.model[:0], c.tools[:0], c.checksum[:0]}
}

// arrays are the column arrays $2 to $15 of entriesArrays.
func (c *entryColumns) arrays() []any {
	return []any{c.seq, c.id, c.parentID, c.parentSeq, c.typ, c.ts,
		c.depth, c.start, c.thinking, c.model, c.tools, c.targetID, c.raw, c.checksum}
}

// groupArgs are insertGroupEntries' arguments for the rows added by addTo.
func (c *entryColumns) groupArgs() []any { return append([]any{c.session}, c.arrays()...) }

func nullable(s string) pgtype.Text { return pgtype.Text{String: s, Valid: s != ""} }

func textOf(s string) pgtype.Text { return pgtype.Text{String: s, Valid: true} }

func nullInt(n sql.NullInt64) pgtype.Int8 { return pgtype.Int8{Int64: n.Int64, Valid: n.Valid} }

func int8Of(n int64) pgtype.Int8 { return pgtype.Int8{Int64: n, Valid: true} }

// moveBranch makes the branch table the path of the batch's final leaf.
// The part of the path inside the batch is known in memory; the part
// stored before it is session.moveBranch's, to the first stored ancestor.
func (b *batch) moveBranch(leaf string) error {
	j, ok := b.local[leaf]
	if !ok {
		return b.st.moveBranch(b.ctx, b.tx, leaf) // "" or a stored entry
	}
	var depths, seqs []int64
	top := j
	for k := j; k >= 0; k = b.parents[k] {
		top = k
		depths = append(depths, int64(b.places[k].Depth))
		seqs = append(seqs, b.places[k].Seq)
	}
	// The path above the batch's part: the stored parent's, or none.
	if err := b.st.moveBranch(b.ctx, b.tx, b.entries[top].ParentID); err != nil {
		return err
	}
	if _, err := b.tx.ExecContext(b.ctx, `INSERT INTO branch (session, depth, seq)
		SELECT $1, d, s FROM unnest($2::bigint[], $3::bigint[]) AS t (d, s)`, b.st.pk, depths, seqs); err != nil {
		return err
	}
	p := b.places[j]
	b.st.setLeaf(leaf, &p)
	return nil
}

// root converts a placement to the root package's (0 for none).
func (p placement) root() sessiontree.Placement {
	return sessiontree.Placement{Key: p.Seq, Depth: int64(p.Depth), Start: int64(p.StartDepth),
		Thinking: p.Thinking.Int64, Model: p.Model.Int64, Tools: p.Tools.Int64}
}

// fromRoot converts the root package's placement to this package's.
func fromRoot(p sessiontree.Placement) placement {
	key := func(k int64) sql.NullInt64 { return sql.NullInt64{Int64: k, Valid: k != 0} }
	return placement{Seq: p.Key, Depth: int(p.Depth), StartDepth: int(p.Start),
		Thinking: key(p.Thinking), Model: key(p.Model), Tools: key(p.Tools)}
}
