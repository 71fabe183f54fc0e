package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/jsonl"
)

// PiSessionsDir returns the folder where pi keeps its session files:
// $PI_CODING_AGENT_DIR/sessions when that variable is set, else
// ~/.pi/agent/sessions.
func PiSessionsDir() (string, error) {
	if dir := os.Getenv("PI_CODING_AGENT_DIR"); dir != "" {
		return filepath.Join(dir, "sessions"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("pi sessions folder: %w", err)
	}
	return filepath.Join(home, ".pi", "agent", "sessions"), nil
}

// Outcome is what [Store.Import] did with one file.
type Outcome int

// The outcomes of importing a file.
const (
	// OutcomeNew: the file's session was created with its entries.
	OutcomeNew Outcome = iota + 1
	// OutcomeGrown: the file had grown since it was imported, and the
	// lines after the imported part were added to its session.
	OutcomeGrown
	// OutcomeUnchanged: nothing new to import; nothing was written.
	OutcomeUnchanged
	// OutcomeConflict: the file disagrees with the store (its imported
	// part changed, its session id is taken, or the session was written
	// to since the import); nothing was written. Err matches
	// sessiontree.ErrConflict.
	OutcomeConflict
	// OutcomeFailed: the file could not be imported (unreadable, damaged
	// beyond what the mode tolerates); nothing was written. Err says why;
	// for damage it is a *jsonl.LineError with the file and line.
	OutcomeFailed
)

// String returns the outcome's name: new, grown, unchanged, conflict or
// failed.
func (o Outcome) String() string {
	switch o {
	case OutcomeNew:
		return "new"
	case OutcomeGrown:
		return "grown"
	case OutcomeUnchanged:
		return "unchanged"
	case OutcomeConflict:
		return "conflict"
	case OutcomeFailed:
		return "failed"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// MarshalText writes the outcome's name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// ImportOptions configure [Store.Import]. The zero value imports in
// jsonl.Recover mode without progress reports.
type ImportOptions struct {
	// Mode is how much damage a file may have (the JSONL reader's modes):
	// jsonl.Strict refuses any; jsonl.Recover (the zero value) imports
	// the lines before a torn last line, as after a crash in the middle
	// of a write, and refuses other damage; jsonl.Lenient skips every bad
	// line as pi does (lines that are not JSON or lack fields, and
	// entries whose id is taken or whose parent or target is missing).
	// What is tolerated is reported in [FileResult.Problems].
	Mode jsonl.Mode
	// Progress, when set, is called as files and bytes are done, from the
	// goroutine running Import: at the start, about every megabyte, and
	// after each file.
	Progress func(ImportProgress)
}

// ImportProgress is a progress report of [Store.Import].
type ImportProgress struct {
	// File is the file being imported, "" in the last report.
	File string
	// FilesDone of FilesTotal files are finished.
	FilesDone, FilesTotal int
	// BytesDone of BytesTotal bytes (the files' sizes) are finished.
	BytesDone, BytesTotal int64
}

// FileResult is what [Store.Import] did with one file.
type FileResult struct {
	// Path is the file's absolute path.
	Path string `json:"path"`
	// SessionID is the file's session, "" when it was not read that far.
	SessionID string `json:"sessionId,omitempty"`
	// Outcome says what happened.
	Outcome Outcome `json:"outcome"`
	// Entries is the number of entries added.
	Entries int `json:"entries"`
	// Bytes is the number of the file's bytes imported this time.
	Bytes int64 `json:"bytes"`
	// Problems are the damaged lines that were tolerated: lines skipped in
	// lenient mode and a torn last line (left for a later import, which
	// tries it again once the writer has finished it). Each names the
	// file and the line.
	Problems []*jsonl.LineError `json:"problems,omitempty"`
	// Err is why the file was not imported (OutcomeConflict,
	// OutcomeFailed), nil otherwise.
	Err error `json:"-"`
}

// ImportReport is what [Store.Import] did.
type ImportReport struct {
	// Files has one result per file, in the order they were found.
	Files []FileResult `json:"files"`
	// Entries and Bytes total what was imported.
	Entries int   `json:"entries"`
	Bytes   int64 `json:"bytes"`
	// Duration is the time the import took.
	Duration time.Duration `json:"duration"`
}

// Count returns how many files had outcome o.
func (r ImportReport) Count(o Outcome) int {
	n := 0
	for _, f := range r.Files {
		if f.Outcome == o {
			n++
		}
	}
	return n
}

// Import brings pi session files into the store: each file given, and
// every *.jsonl file under each directory given (pi's sessions folder,
// [PiSessionsDir], when paths is empty). Files of every version are read
// through the JSONL reader, which migrates them to version 3, and stored
// with the engine's batch append: session id, entry ids, parents,
// timestamps and every byte of every entry are kept.
//
// Each file is imported in one transaction, all or nothing, and the store
// remembers it (path, session, size, how many bytes were imported, a
// SHA-256 of them, where to resume), so importing is idempotent:
//   - a file imported before and unchanged is only read to check its
//     hash; nothing is written;
//   - a file that has grown since (pi appends to its files) imports the
//     lines after the imported part, resuming the reader where it
//     stopped, into the same session;
//   - a file whose imported part changed, or whose session was written to
//     in the store since the import, is a conflict: reported, not merged;
//   - a new file whose session id is already in the store is a conflict.
//
// One file's failure never stops the others; the report says what
// happened to each. A file's import holds the database's write lock for
// that file only; other writers wait meanwhile (up to their busy
// timeout), so a very large file delays them. Building the search index
// is most of an import's cost (schema.sql). The error is non-nil only when the import as a whole
// stops: ctx is done or the store is closed (the report then covers the
// files done so far).
func (s *Store) Import(ctx context.Context, paths []string, opts ImportOptions) (ImportReport, error) {
	start := time.Now()
	var report ImportReport
	if len(paths) == 0 {
		dir, err := PiSessionsDir()
		if err != nil {
			return report, fmt.Errorf("import: %w", err)
		}
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			report.Duration = time.Since(start)
			return report, nil
		}
		paths = []string{dir}
	}
	files := collectFiles(paths)
	p := ImportProgress{FilesTotal: len(files)}
	for _, f := range files {
		p.BytesTotal += f.size
	}
	progress := func(file string, extra int64) {
		if opts.Progress != nil {
			q := p
			q.File, q.BytesDone = file, p.BytesDone+extra
			opts.Progress(q)
		}
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			report.Duration = time.Since(start)
			return report, fmt.Errorf("import: %w", err)
		}
		progress(f.path, 0)
		var res FileResult
		if f.err != nil {
			res = FileResult{Path: f.path, Outcome: OutcomeFailed, Err: f.err}
		} else {
			res = s.importFile(ctx, f.path, opts.Mode, func(done int64) { progress(f.path, done) })
		}
		report.Files = append(report.Files, res)
		report.Entries += res.Entries
		report.Bytes += res.Bytes
		p.FilesDone++
		p.BytesDone += f.size
		if errors.Is(res.Err, sessiontree.ErrClosed) || ctx.Err() != nil {
			report.Duration = time.Since(start)
			return report, fmt.Errorf("import %s: %w", f.path, cmpErr(ctx.Err(), res.Err))
		}
	}
	progress("", 0)
	report.Duration = time.Since(start)
	return report, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

type candidate struct {
	path string
	size int64
	err  error
}

// collectFiles expands paths into files: a directory gives its *.jsonl
// files, recursively, in lexical order; a file is taken whatever its
// name. Each file appears once.
func collectFiles(paths []string) []candidate {
	var out []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		if !seen[c.path] {
			seen[c.path] = true
			out = append(out, c)
		}
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			add(candidate{path: p, err: err})
			continue
		}
		fi, err := os.Stat(abs)
		if err != nil {
			add(candidate{path: abs, err: fmt.Errorf("import: %w", err)})
			continue
		}
		if !fi.IsDir() {
			add(candidate{path: abs, size: fi.Size()})
			continue
		}
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				add(candidate{path: path, err: fmt.Errorf("import: %w", err)})
				return nil
			}
			if d.IsDir() || !strings.HasSuffix(d.Name(), ".jsonl") {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				add(candidate{path: path, err: fmt.Errorf("import: %w", err)})
				return nil
			}
			if info.Mode().IsRegular() {
				add(candidate{path: path, size: info.Size()})
			}
			return nil
		})
		if err != nil {
			add(candidate{path: abs, err: fmt.Errorf("import: %w", err)})
		}
	}
	return out
}

// importRecord is a row of the imports table.
type importRecord struct {
	SessionID      string
	Size           int64
	ImportedBytes  int64
	PrefixSHA256   string
	Position       jsonl.Position
	SessionEntries int64
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readRecord(ctx context.Context, q queryer, path string) (importRecord, bool, error) {
	var r importRecord
	var pos string
	err := q.QueryRowContext(ctx, `SELECT session_id, size, imported_bytes, prefix_sha256, position, session_entries
FROM imports WHERE path = ?`, path).Scan(&r.SessionID, &r.Size, &r.ImportedBytes, &r.PrefixSHA256, &pos, &r.SessionEntries)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read import record: %w", err)
	}
	if err := json.Unmarshal([]byte(pos), &r.Position); err != nil {
		return r, false, fmt.Errorf("read import record: position: %w", err)
	}
	return r, true, nil
}

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

var errUnchanged = &outcomeError{OutcomeUnchanged, errors.New("unchanged")}

// importBatchEntries and importBatchBytes bound one AppendBatch call of an
// import; a file's calls share one transaction.
const (
	importBatchEntries = 2048
	importBatchBytes   = 8 << 20
	progressEvery      = 1 << 20
)

func (s *Store) importFile(ctx context.Context, path string, mode jsonl.Mode, progress func(done int64)) FileResult {
	res := FileResult{Path: path}
	fail := func(err error) FileResult {
		res.Outcome, res.Err = OutcomeFailed, err
		res.Entries, res.Bytes, res.Problems = 0, 0, nil
		return res
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(fmt.Errorf("import: %w", err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("import: %w", err))
	}
	// An unchanged file is told without the write lock.
	var rec importRecord
	var found bool
	err = s.db.View(ctx, func(tx *sqlx.Tx) (err error) {
		rec, found, err = readRecord(ctx, tx, path)
		return err
	})
	if err != nil {
		return fail(fmt.Errorf("import %s: %w", path, err))
	}
	if found && fi.Size() == rec.Size {
		res.SessionID = rec.SessionID
		if _, err := checkPrefix(f, rec, fi.Size()); err != nil {
			res.Outcome, res.Err = outcomeOf(err), err
			return res
		}
		res.Outcome = OutcomeUnchanged
		return res
	}
	err = s.db.Update(ctx, func(tx *engine.Tx) error {
		res = FileResult{Path: path}
		return s.importTx(ctx, tx, f, &res, mode, progress)
	})
	var oe *outcomeError
	switch {
	case err == nil:
	case errors.As(err, &oe):
		res.Outcome, res.Entries, res.Bytes = oe.outcome, 0, 0
		if oe.outcome != OutcomeUnchanged {
			res.Err, res.Problems = fmt.Errorf("import %s: %w", path, oe.err), nil
		}
	default:
		sid := res.SessionID
		res = fail(fmt.Errorf("import %s: %w", path, err))
		res.SessionID = sid
	}
	return res
}

func outcomeOf(err error) Outcome {
	var oe *outcomeError
	if errors.As(err, &oe) {
		return oe.outcome
	}
	return OutcomeFailed
}

// checkPrefix checks that the file's first rec.ImportedBytes bytes are
// the ones imported, and returns the hash state after them.
func checkPrefix(f *os.File, rec importRecord, size int64) (hash.Hash, error) {
	if size < rec.ImportedBytes {
		return nil, conflict("the file has %d bytes, fewer than the %d already imported into session %s", size, rec.ImportedBytes, rec.SessionID)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, rec.ImportedBytes)); err != nil {
		return nil, &outcomeError{OutcomeFailed, fmt.Errorf("hash: %w", err)}
	}
	if hex.EncodeToString(h.Sum(nil)) != rec.PrefixSHA256 {
		return nil, conflict("the %d bytes already imported into session %s have changed since", rec.ImportedBytes, rec.SessionID)
	}
	return h, nil
}

// countingWriter counts what is written through it to a hash.
type countingWriter struct {
	h hash.Hash
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// importTx imports one file inside a write transaction: from its start
// into a new session, or from where the last import stopped.
func (s *Store) importTx(ctx context.Context, tx *engine.Tx, f *os.File, res *FileResult, mode jsonl.Mode, progress func(int64)) error {
	path := res.Path
	rec, found, err := readRecord(ctx, tx.SQL(), path)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return &outcomeError{OutcomeFailed, err}
	}
	var st *engine.Storage
	var indexDone func() error
	known := map[string]uint64{} // id -> hash of the entry's JSON, 0 when stored before
	var resume *jsonl.Position
	var startOffset int64
	var h hash.Hash
	if found {
		res.SessionID = rec.SessionID
		if h, err = checkPrefix(f, rec, fi.Size()); err != nil {
			return err
		}
		if fi.Size() == rec.Size {
			return errUnchanged
		}
		if st, err = tx.OpenSession(rec.SessionID); err != nil {
			return err
		}
		var count int64
		lo, hi := st.Key()<<32, st.Key()<<32|0xffffffff
		if err := tx.SQL().GetContext(ctx, &count, `SELECT entry_count FROM sessions WHERE pk = ?`, st.Key()); err != nil {
			return err
		}
		if count != rec.SessionEntries {
			return conflict("session %s has %d entries, %d when the file was imported: it was written to in the store since, so the file's new lines are not merged",
				rec.SessionID, count, rec.SessionEntries)
		}
		rows, err := tx.SQL().QueryContext(ctx, `SELECT id FROM entries WHERE pk BETWEEN ? AND ?`, lo, hi)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			known[id] = 0
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		pos := rec.Position
		resume, startOffset = &pos, rec.ImportedBytes
		if indexDone, err = deferIndex(ctx, tx, st, count+1); err != nil {
			return err
		}
	} else {
		h = sha256.New()
	}

	cw := &countingWriter{h: h}
	src := io.TeeReader(io.NewSectionReader(f, startOffset, math.MaxInt64-startOffset), cw)
	consumed := startOffset
	var pos jsonl.Position
	if resume != nil {
		pos = *resume
	}
	var batch []sessiontree.Entry
	var batchBytes int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := tx.AppendBatch(st, batch); err != nil {
			return err
		}
		res.Entries += len(batch)
		batch, batchBytes = batch[:0], 0
		return nil
	}
	lastProgress := startOffset
	for r, err := range jsonl.Read(ctx, src, jsonl.ReadOptions{Name: path, Mode: mode, Resume: resume}) {
		if err != nil {
			var le *jsonl.LineError
			if errors.As(err, &le) {
				return &outcomeError{OutcomeFailed, err}
			}
			return err
		}
		switch r.Kind {
		case jsonl.KindHeader:
			meta := r.Header.SessionMeta
			meta.Version = jsonl.CurrentVersion // entries are migrated to it
			res.SessionID = meta.ID
			if _, err := tx.OpenSession(meta.ID); err == nil {
				from := ""
				var other string
				if tx.SQL().GetContext(ctx, &other, `SELECT path FROM imports WHERE session_id = ? LIMIT 1`, meta.ID) == nil {
					from = " (imported from " + other + ")"
				}
				return conflict("session %s is already in the store%s", meta.ID, from)
			} else if !errors.Is(err, sessiontree.ErrNotFound) {
				return err
			}
			if st, err = tx.CreateSession(meta); err != nil {
				return err
			}
			if indexDone, err = deferIndex(ctx, tx, st, 1); err != nil {
				return err
			}
		case jsonl.KindEntry:
			e := r.Entry
			sum := rawHash(e.Raw)
			if why, fatal := checkEntry(e, sum, known, func(id string) (string, error) { return storedRaw(ctx, tx, st, id) }); why != "" {
				le := &jsonl.LineError{Path: path, Line: r.Line, Offset: r.Offset, Err: &sessiontree.CorruptError{EntryID: e.ID, Reason: why}}
				if mode != jsonl.Lenient || fatal {
					return &outcomeError{OutcomeFailed, le}
				}
				res.Problems = append(res.Problems, le)
				break
			}
			known[e.ID] = sum
			batch = append(batch, e)
			batchBytes += len(e.Raw)
			if len(batch) >= importBatchEntries || batchBytes >= importBatchBytes {
				if err := flush(); err != nil {
					return err
				}
			}
		case jsonl.KindSkipped, jsonl.KindTorn:
			res.Problems = append(res.Problems, r.Err)
		}
		pos, consumed = r.Next, r.Next.Offset
		if consumed-lastProgress >= progressEvery {
			progress(consumed - startOffset)
			lastProgress = consumed
		}
	}
	if st == nil {
		return &outcomeError{OutcomeFailed, fmt.Errorf("%s: no session header", path)}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := indexDone(); err != nil {
		return err
	}
	res.Bytes = consumed - startOffset
	res.Outcome = OutcomeNew
	if found {
		res.Outcome = OutcomeGrown
		if consumed == startOffset {
			res.Outcome = OutcomeUnchanged
		}
	}

	// The hash has seen every byte the reader read; when that is more
	// than was consumed (a torn tail, or lines written meanwhile), the
	// consumed prefix is hashed again.
	sum := h.Sum(nil)
	if startOffset+cw.n != consumed {
		h2 := sha256.New()
		if _, err := io.Copy(h2, io.NewSectionReader(f, 0, consumed)); err != nil {
			return err
		}
		sum = h2.Sum(nil)
	}
	posJSON, err := json.Marshal(pos)
	if err != nil {
		return err
	}
	end, err := f.Stat()
	if err != nil {
		return err
	}
	_, err = tx.SQL().ExecContext(ctx, `INSERT INTO imports (path, session_id, size, mtime_ns, imported_bytes,
    prefix_sha256, position, session_entries, imported_at)
VALUES (?, ?, ?, ?, ?, ?, ?, (SELECT entry_count FROM sessions WHERE pk = ?), ?)
ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id, size = excluded.size,
    mtime_ns = excluded.mtime_ns, imported_bytes = excluded.imported_bytes,
    prefix_sha256 = excluded.prefix_sha256, position = excluded.position,
    session_entries = excluded.session_entries, imported_at = excluded.imported_at`,
		path, st.ID(), max(end.Size(), consumed), end.ModTime().UnixNano(), consumed, hex.EncodeToString(sum),
		string(posJSON), st.Key(), sessiontree.FormatTime(time.Now()))
	if err != nil {
		return fmt.Errorf("record import: %w", err)
	}
	progress(consumed - startOffset)
	return nil
}

// deferIndex makes the search index trigger stand aside for the entries
// of st from seq on, for the rest of the transaction; the function it
// returns indexes them with one statement and ends the deferral. A bulk
// write indexed so makes one segment of FTS5 index instead of one per
// statement of the batch (see migration 0005).
func deferIndex(ctx context.Context, tx *engine.Tx, st *engine.Storage, seq int64) (func() error, error) {
	lo, hi := st.Key()<<32|seq, st.Key()<<32|0xffffffff
	if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO search_deferred (lo, hi) VALUES (?, ?)`, lo, hi); err != nil {
		return nil, fmt.Errorf("defer search index: %w", err)
	}
	return func() error {
		if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO entries_fts (rowid, body)
SELECT pk, body FROM search_text WHERE pk BETWEEN ? AND ?`, lo, hi); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if _, err := tx.SQL().ExecContext(ctx, `DELETE FROM search_deferred WHERE lo = ? AND hi = ?`, lo, hi); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		return nil
	}, nil
}

// checkEntry does the checks of the engine's batch append that need the
// session's ids, so that a bad entry is reported with its line (and
// skipped in lenient mode) instead of failing the batch. It returns why
// the entry may not be appended ("" when it may), and whether that is
// fatal in every mode: as in the JSONL reader, an exact duplicate of an
// earlier line is a skippable warning, an id used by a different entry
// is not. sum is the entry's rawHash; raw reads a stored entry's JSON.
func checkEntry(e sessiontree.Entry, sum uint64, known map[string]uint64, raw func(id string) (string, error)) (string, bool) {
	if prev, dup := known[e.ID]; dup {
		same := prev == sum
		if prev == 0 {
			r, err := raw(e.ID)
			same = err == nil && r == string(e.Raw)
		}
		if same {
			return "duplicate of an earlier line", false
		}
		return "duplicate id with different content", true
	}
	if e.ParentID != "" {
		if _, ok := known[e.ParentID]; !ok {
			return "parent " + e.ParentID + " does not exist before this line", false
		}
	}
	if e.Type == sessiontree.TypeLabel || e.Type == sessiontree.TypeLeaf {
		if t := e.TargetID(); t != "" {
			if _, ok := known[t]; !ok {
				return "targetId " + t + " does not exist before this line", false
			}
		}
	}
	return "", false
}

// rawHash is a 64-bit FNV-1a hash of an entry's JSON, never 0 (which
// checkEntry reads as "stored before this import").
func rawHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h | 1
}

// storedRaw reads the JSON of an entry stored before this import.
func storedRaw(ctx context.Context, tx *engine.Tx, st *engine.Storage, id string) (string, error) {
	var raw string
	err := tx.SQL().GetContext(ctx, &raw, `SELECT raw FROM entries WHERE session = ? AND id = ?`, st.Key(), id)
	return raw, err
}
