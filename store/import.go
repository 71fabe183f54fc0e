package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/maphash"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/fsx"
	"github.com/sessiontree/sessiontree/internal/lines"
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
	// beyond what the mode tolerates); nothing was written, unless the
	// storage failed midway (Entries then counts the chunks committed,
	// which the next import continues). Err says why; for damage it is a
	// *jsonl.LineError with the file and line.
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
	// MaxLineBytes bounds a line's length, as
	// jsonl.ReadOptions.MaxLineBytes: 0 means jsonl.DefaultMaxLineBytes
	// (256 MiB). A file with a longer line fails in every mode, with a
	// *jsonl.LineError whose Err is a *jsonl.LineTooLongError; the
	// import's memory is bounded by it.
	MaxLineBytes int
	// Progress, when set, is called as files and bytes are done, from the
	// goroutine running Import: at the start of each file, after each
	// file, and after each chunk of a file of several (see Import). It is
	// never called inside a transaction, so it may use the store.
	Progress func(ImportProgress)
	// NoWait makes an import that finds another process holding the
	// database's write lock for more than a moment stop at once, with an
	// error matching sessiontree.ErrLocked and the report of the files
	// done before, instead of waiting for it (see Import).
	NoWait bool
	// Waiting, when set, is called each time the import starts waiting
	// for another process's write, from the goroutine running Import and
	// never inside a transaction: a command tells its user.
	Waiting func()
	// FollowRewrites takes a file that was rewritten whole, or moved, as
	// the same file when it still begins with every entry of its session
	// (see Import), instead of reporting a conflict; and it skips a torn
	// last line left for later that a newline has ended since while it
	// still is not JSON, as pi skips it (pi ends a torn line so when it
	// opens a file after a crash). A watcher following pi sets it: pi
	// rewrites a file when it migrates it from an older version, and a
	// file may move.
	FollowRewrites bool
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
	// Path is the file's resolved path: absolute, with every symbolic
	// link followed. The store knows a file by it.
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
	// lenient mode, a torn line ended by a newline (with
	// [ImportOptions.FollowRewrites]), and a torn last line (left for a
	// later import, which tries it again once the writer has finished
	// it). Each names the file and the line.
	Problems []*jsonl.LineError `json:"problems,omitempty"`
	// Torn is the torn last line left for a later import (also in
	// Problems), nil when the file ends in a whole line: a writer may
	// still be finishing it.
	Torn *jsonl.LineError `json:"-"`
	// Rewritten says the file was rewritten since it was imported, or
	// moved (MovedFrom is then its old path), and was followed
	// ([ImportOptions.FollowRewrites]).
	Rewritten bool   `json:"rewritten,omitempty"`
	MovedFrom string `json:"movedFrom,omitempty"`
	// Unknown counts the entries imported this time whose type this
	// version does not know (a newer pi wrote them). They are stored and
	// exported byte for byte like any other: not a problem, a warning to
	// show once for the file ([sessiontree.UnknownTypes.String]).
	Unknown sessiontree.UnknownTypes `json:"unknownTypes,omitempty"`
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
// timestamps and every byte of every entry are kept. Entries of types
// this version does not know are imported like any other and counted in
// [FileResult.Unknown], a warning, not a problem.
//
// Paths are resolved: a folder or a file given through a symbolic link
// (pi's folder under a linked ~/.pi, say) is followed, and a file is
// known by its resolved path, so a file reached by two paths is one
// file, imported once. Inside a folder, a *.jsonl link to a file inside
// the folder is followed; links leading outside it, and links to
// folders, are not. A path that is neither a regular file nor a folder
// (a named pipe, a device) fails with a *sessiontree.NotRegularFileError
// before anything reads it.
//
// A file whose new part fits in one chunk (up to 8 MB or 16384
// entries), as most sessions do, is read once: its entries are checked
// and appended as the reader parses the next ones, in one transaction
// with the store's record of the file (path, session, size, how many
// bytes are imported, a SHA-256 of them, where to resume), which a file
// the mode refuses rolls back, leaving nothing behind. A larger file is
// read twice: the first pass checks everything new in it and writes
// nothing, for the same guarantee; the second commits it in chunks,
// every chunk one transaction together with the file's record. An import
// cut short (canceled, crashed, a storage error) thus leaves a
// consistent prefix that the next import continues. Importing is
// idempotent:
//   - a file imported before and unchanged is only read to check its
//     hash; nothing is written;
//   - a file that has grown since (pi appends to its files) imports the
//     lines after the imported part, resuming the reader where it
//     stopped, into the same session;
//   - a file whose imported part changed, or whose session was written to
//     in the store since the import, is a conflict: reported, not merged;
//   - a new file whose session id is already in the store is a conflict;
//   - with [ImportOptions.FollowRewrites], a file whose imported part
//     changed, or a new path whose session was imported from a file that
//     no longer exists (the file moved), is followed when its entries
//     begin with every entry of the session, by id and in order (pi
//     rewrites a file whole when it migrates it, writing the same ids):
//     the session keeps what it holds, the file's record moves to the
//     file's bytes after those entries, and the entries after them are
//     imported ([FileResult.Rewritten]). A version-1 file that pi
//     migrated has new random ids and stays a conflict;
//   - imports of the same files running at once (two processes importing
//     one folder) import each file once: the one that finds, inside its
//     transaction, that another committed the file since it looked
//     starts over from there, which mostly leaves it nothing to do.
//
// One file's failure never stops the others; the report says what
// happened to each. The error is non-nil only when the import as a whole
// stops: ctx is done, the store is closed, or another process holds the
// write lock and [ImportOptions.NoWait] is set (the report then covers the
// files done before).
//
// An import holds the database's write lock one chunk at a time, so
// other writers wait a second or two at most. When another process holds
// it, the import waits for it as long as ctx allows, telling
// [ImportOptions.Waiting], and no file fails for it: the wait is the
// import's, once, not the busy timeout of every file. It leaves the
// search index to [Store.Index] (which the command line runs right after
// an import, and a search when it can): indexing costs several times what
// storing does. A store opened read-only (engine.DB.ReadOnly) imports
// nothing: Import returns that error at once.
func (s *Store) Import(ctx context.Context, paths []string, opts ImportOptions) (ImportReport, error) {
	start := time.Now()
	var report ImportReport
	if err := s.db.ReadOnly(); err != nil {
		return report, fmt.Errorf("import: %w", err)
	}
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
	g := gate{db: s.db, noWait: opts.NoWait, waiting: opts.Waiting, grace: lockGrace}
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
			res = s.importFile(ctx, g, f.path, opts, func(done int64) { progress(f.path, done) })
		}
		if errors.Is(res.Err, sessiontree.ErrLocked) && res.Entries == 0 {
			// NoWait and another process writing: the file was not
			// imported, nor tried; the files after it are not either.
			report.Duration = time.Since(start)
			return report, fmt.Errorf("import: %w", lockedError(s.db))
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
// name. Each file appears once, by its resolved path (absolute, every
// symbolic link followed), which keys its import record: a file reached
// by two paths is one file. A path given that is a link, or that goes
// through one (~/.pi linked by a dotfile setup), is followed wherever it
// leads. Inside a directory, a *.jsonl link to a file is followed when
// the file is inside the directory too, and links to directories are
// not followed at all: whatever one inside the directory leads to is
// walked anyway, and one leading outside (to / say) is not the
// directory's, so a link loop cannot loop. A path that is not a regular
// file or a directory is refused before anything reads it.
func collectFiles(paths []string) []candidate {
	var out []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		if !seen[c.path] {
			seen[c.path] = true
			out = append(out, c)
		}
	}
	file := func(path string, fi fs.FileInfo) {
		add(candidate{path: path, size: fi.Size(), err: fsx.Check(path, fi, "session file")})
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			add(candidate{path: p, err: err})
			continue
		}
		root, err := filepath.EvalSymlinks(abs)
		if err != nil {
			add(candidate{path: abs, err: fmt.Errorf("import: %w", err)})
			continue
		}
		fi, err := os.Stat(root)
		if err != nil {
			add(candidate{path: root, err: fmt.Errorf("import: %w", err)})
			continue
		}
		if !fi.IsDir() {
			file(root, fi)
			continue
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				add(candidate{path: path, err: fmt.Errorf("import: %w", err)})
				return nil
			}
			if d.IsDir() || !IsSessionFileName(d.Name()) {
				return nil
			}
			info, err := d.Info()
			if d.Type()&fs.ModeSymlink != 0 {
				target, lerr := filepath.EvalSymlinks(path)
				if lerr != nil {
					add(candidate{path: path, err: fmt.Errorf("import: %w", lerr)})
					return nil
				}
				if !fsx.Within(root, target) {
					return nil
				}
				path = target
				info, err = os.Stat(path)
			}
			if err != nil {
				add(candidate{path: path, err: fmt.Errorf("import: %w", err)})
				return nil
			}
			if info.Mode().IsRegular() {
				file(path, info)
			}
			return nil
		})
		if err != nil {
			add(candidate{path: root, err: fmt.Errorf("import: %w", err)})
		}
	}
	return out
}

// IsSessionFileName tells whether a file found in a folder is taken as a
// session file by [Store.Import]: its name ends in ".jsonl", as pi's do.
func IsSessionFileName(name string) bool { return strings.HasSuffix(name, ".jsonl") }

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

// An import commits a file in pieces of at most importChunkEntries
// entries or importChunkBytes of the file, each one transaction, so that
// it never holds the write lock long. Variables for tests.
var (
	importChunkEntries       = 16384
	importChunkBytes   int64 = 8 << 20
)

// afterAppend, when set (by tests), is called after each batch of entries
// a one-pass import appends, inside its transaction.
var afterAppend func()

// A one-pass import hands entries to the engine's batch append this many
// (or this many bytes of them) at a time: few enough that the JSONL
// reader parses the next ones meanwhile, on another core, and enough to
// spread each call's fixed costs (reading the session's head, rewriting
// the active branch). Variables for tests.
var (
	appendEntries = 1024
	appendBytes   = 1 << 20
)

// errChunkFull stops a one-pass import of a file that turns out to hold
// more than a chunk; its transaction is rolled back.
var errChunkFull = errors.New("more than one chunk")

// fileImport is one file's import as it goes from transaction to
// transaction.
type fileImport struct {
	s      *Store
	ctx    context.Context
	gate   gate // how its writes wait for another process's
	path   string
	f      *os.File
	fi     os.FileInfo // the file as the import found it
	mode   jsonl.Mode
	res    *FileResult
	found  bool         // the store has a record of the file
	rec    importRecord // that record, as last read or written
	meta   sessiontree.SessionMeta
	start  int64           // where this import starts reading
	from   *jsonl.Position // the reader's resume point, nil for a new file
	seed   map[string]uint64
	h      hash.Hash // SHA-256 of the file's first hashed bytes
	hashed int64
	// unknownAt are the entries of unknown types noted, with their
	// offsets (see attempt).
	unknownAt []unknownAt

	maxLine int  // ImportOptions.MaxLineBytes
	follow  bool // ImportOptions.FollowRewrites
	longest int  // the longest entry read, in bytes of JSON
	// skipped are lines skipped before the import's start (see
	// skipClosedTorn), kept in the result's Problems.
	skipped []*jsonl.LineError
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
}

// importFile imports one file (see importAttempt). Imports of the same
// file running at once meet inside the transactions that write: one that
// finds the file's record changed since it read it starts over, from
// what the other import committed, which mostly leaves it nothing to do.
// So imports of one folder running at once end as one import would, each
// file imported once, and none reports the others' work as a conflict.
func (s *Store) importFile(ctx context.Context, g gate, path string, opts ImportOptions, progress func(done int64)) FileResult {
	var prev *attempt
	for n := 1; ; n++ {
		a := &attempt{}
		var base int64
		if prev != nil {
			base = prev.res.Bytes
		}
		a.res = s.importAttempt(ctx, g, path, opts, func(done int64) { progress(base + done) }, a)
		if prev != nil {
			a.after(prev)
		}
		if !errors.Is(a.res.Err, errMeanwhile) || n == maxImportAttempts || ctx.Err() != nil {
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

// recheck reads the file's record again in q, the transaction about to
// write (or the read that checks a new file's header), and returns
// errMeanwhile, as a conflict outcome, when another import changed it
// since this one read it.
func (fim *fileImport) recheck(q queryer) (importRecord, bool, error) {
	cur, found, err := readRecord(fim.ctx, q, fim.path)
	if err != nil {
		return cur, found, err
	}
	if found != fim.found || found && (cur.ImportedBytes != fim.rec.ImportedBytes || cur.SessionID != fim.rec.SessionID) {
		return cur, found, &outcomeError{OutcomeConflict, errMeanwhile}
	}
	return cur, found, nil
}

// importAttempt imports one file, telling a how. When its new part fits
// in one chunk, as most sessions do, it is read once and committed in one
// transaction (once); a larger file is read twice, checked and then
// committed chunk by chunk (twice). Either way a file the mode refuses
// leaves nothing behind, and an import cut short resumes where its last
// commit ended.
func (s *Store) importAttempt(ctx context.Context, g gate, path string, opts ImportOptions, progress func(done int64), a *attempt) FileResult {
	res := FileResult{Path: path}
	var fim *fileImport
	result := func(err error) FileResult {
		if fim != nil {
			a.created = !a.resumed && fim.found
			a.unknownAt = fim.unknownAt
		}
		var oe *outcomeError
		switch {
		case err == nil:
		case errors.As(err, &oe) && oe.outcome == OutcomeUnchanged:
			res.Outcome = OutcomeUnchanged
		case errors.As(err, &oe):
			res.Outcome, res.Err = oe.outcome, fmt.Errorf("import %s: %w", path, oe.err)
		default:
			res.Outcome, res.Err = OutcomeFailed, fmt.Errorf("import %s: %w", path, err)
		}
		if res.Err != nil && res.Entries == 0 {
			res.Problems, res.Torn, res.Unknown, a.unknownAt = nil, nil, nil, nil
		}
		return res
	}
	f, err := fsx.Open(path, os.O_RDONLY, "session file")
	if err != nil {
		return result(err)
	}
	defer f.Close()
	defer func() {
		// Nothing holds the file's entries now: a huge one's memory goes
		// back at once, before the next file or the search index's
		// catch-up, which has SQLite read the entry again.
		if fim != nil {
			lines.Dropped(fim.longest)
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return result(err)
	}
	fim = &fileImport{s: s, ctx: ctx, gate: g, path: path, f: f, fi: fi, mode: opts.Mode, maxLine: opts.MaxLineBytes, follow: opts.FollowRewrites, res: &res, seed: map[string]uint64{}, h: sha256.New()}
	err = s.db.View(ctx, func(tx *sqlx.Tx) (err error) {
		fim.rec, fim.found, err = readRecord(ctx, tx, path)
		return err
	})
	if err != nil {
		return result(err)
	}
	if a.resumed = fim.found; fim.found {
		a.start = fim.rec.ImportedBytes
		rec := fim.rec
		res.SessionID = rec.SessionID
		if fim.h, err = checkPrefix(f, rec, fi.Size()); err != nil {
			return result(fim.followRewrite(err, ""))
		}
		if fi.Size() == rec.Size {
			return result(errUnchanged)
		}
		fim.hashed, fim.start = rec.ImportedBytes, rec.ImportedBytes
		pos := rec.Position
		fim.from = &pos
		if err := fim.loadSession(); err != nil {
			return result(err)
		}
		if err := fim.skipClosedTorn(); err != nil {
			return result(err)
		}
	}
	err = errChunkFull
	if fi.Size()-fim.start <= importChunkBytes {
		err = fim.once(progress)
	}
	if errors.Is(err, errChunkFull) {
		err = fim.twice(progress)
	}
	var moved *movedError
	if errors.As(err, &moved) {
		err = fim.followRewrite(err, moved.from)
	}
	if err != nil {
		return result(err)
	}
	switch {
	case !fim.found || res.Outcome == OutcomeNew:
		res.Outcome = OutcomeNew
	case res.Bytes > 0:
		res.Outcome = OutcomeGrown
	default:
		res.Outcome = OutcomeUnchanged
	}
	return result(nil)
}

// loadSession checks the session of a file imported before and reads its
// entry ids.
func (fim *fileImport) loadSession() error {
	ctx, rec := fim.ctx, fim.rec
	return fim.s.db.View(ctx, func(tx *sqlx.Tx) error {
		clear(fim.seed)
		if _, _, err := fim.recheck(tx); err != nil {
			return err
		}
		var pk, count int64
		err := tx.QueryRowContext(ctx, `SELECT pk, entry_count FROM sessions WHERE id = ? AND deleting = 0`, rec.SessionID).Scan(&pk, &count)
		if errors.Is(err, sql.ErrNoRows) {
			return &outcomeError{OutcomeFailed, &engine.SessionNotFoundError{ID: rec.SessionID}}
		}
		if err != nil {
			return err
		}
		if count != rec.SessionEntries {
			return conflict("session %s has %d entries, %d when the file was imported: it was written to in the store since, so the file's new lines are not merged",
				rec.SessionID, count, rec.SessionEntries)
		}
		rows, err := tx.QueryContext(ctx, `SELECT id FROM entries WHERE pk BETWEEN ? AND ?`, pk<<32, pk<<32|0xffffffff)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			fim.seed[id] = 0
		}
		return rows.Err()
	})
}

// walk reads the file from the import's start (up to limit bytes of it,
// or all when limit < 0) and calls visit with each record to consume:
// an entry to append (skip == nil) or a damaged line the mode tolerates.
// Damage the mode refuses ends the walk with an outcomeError. When tee is
// not nil, the bytes read go through it.
func (fim *fileImport) walk(limit int64, tee *hashingReader, visit func(r jsonl.Record, skip *jsonl.LineError) error) error {
	ctx := fim.ctx
	known := maps.Clone(fim.seed)
	raw := func(id string) (string, error) {
		var out string
		err := fim.s.db.View(ctx, func(tx *sqlx.Tx) error {
			return tx.GetContext(ctx, &out, `SELECT e.raw FROM entries e JOIN sessions s ON s.pk = e.session
WHERE s.id = ? AND e.id = ?`, fim.rec.SessionID, id)
		})
		return out, err
	}
	n, hint := int64(math.MaxInt64-fim.start), fim.fi.Size()-fim.start
	if limit >= 0 {
		n, hint = limit, limit
	}
	var src io.Reader = io.NewSectionReader(fim.f, fim.start, n)
	if tee != nil {
		tee.r, src = src, tee
	}
	for r, err := range jsonl.Read(ctx, src, jsonl.ReadOptions{Name: fim.path, Mode: fim.mode, Resume: fim.from, SizeHint: hint, MaxLineBytes: fim.maxLine}) {
		if err != nil {
			var le *jsonl.LineError
			if errors.As(err, &le) {
				return &outcomeError{OutcomeFailed, err}
			}
			return err
		}
		var skip *jsonl.LineError
		switch r.Kind {
		case jsonl.KindEntry:
			e := r.Entry
			fim.longest = max(fim.longest, len(e.Raw))
			sum := rawHash(e.Raw)
			if why, fatal := checkEntry(e, sum, known, raw); why != "" {
				skip = &jsonl.LineError{Path: fim.path, Line: r.Line, Offset: r.Offset, Err: &sessiontree.CorruptError{EntryID: e.ID, Reason: why}}
				if fim.mode != jsonl.Lenient || fatal {
					return &outcomeError{OutcomeFailed, skip}
				}
				break
			}
			known[e.ID] = sum
		case jsonl.KindSkipped, jsonl.KindTorn:
			skip = r.Err
		}
		if err := visit(r, skip); err != nil {
			return err
		}
	}
	return nil
}

// takeHeader takes the session of a new file from its header and
// refuses it when the store has that session already; q is a transaction
// that sees the store as the import will write to it.
func (fim *fileImport) takeHeader(q *sqlx.Tx, h jsonl.Header) error {
	if _, _, err := fim.recheck(q); err != nil {
		return err
	}
	fim.meta = h.SessionMeta
	fim.meta.Version = jsonl.CurrentVersion // entries are migrated to it
	fim.res.SessionID = fim.meta.ID
	var n int
	if err := q.GetContext(fim.ctx, &n, `SELECT count(*) FROM sessions WHERE id = ?`, fim.meta.ID); err != nil || n == 0 {
		return err
	}
	other := "the store"
	var p string
	if q.GetContext(fim.ctx, &p, `SELECT path FROM imports WHERE session_id = ? LIMIT 1`, fim.meta.ID) == nil {
		other = p
		if _, err := os.Lstat(p); fim.follow && errors.Is(err, fs.ErrNotExist) {
			return &movedError{from: p}
		}
	}
	return conflict("session %s is already in the store (from %s)", fim.meta.ID, other)
}

// note takes into the file's result what one record of the read that
// checks the file tells: a damaged line the mode tolerates (skip), or an
// entry to import, whose type may be one this version does not know.
func (fim *fileImport) note(r jsonl.Record, skip *jsonl.LineError) {
	switch {
	case skip != nil:
		fim.res.Problems = append(fim.res.Problems, skip)
		if r.Kind == jsonl.KindTorn {
			fim.res.Torn = skip
		}
	case r.Kind == jsonl.KindEntry:
		fim.res.Unknown.Note(r.Entry.Type)
		if !r.Entry.Type.Known() {
			fim.unknownAt = append(fim.unknownAt, unknownAt{r.Offset, r.Entry.Type})
		}
	}
}

// restart forgets what an earlier read noted: the read starts again.
func (fim *fileImport) restart() {
	fim.res.Problems, fim.res.Torn, fim.res.Unknown, fim.unknownAt = slices.Clone(fim.skipped), nil, nil, nil
}

// headerRead refuses a new file whose read ended without a header.
func (fim *fileImport) headerRead() error {
	if !fim.found && fim.meta.ID == "" {
		return &outcomeError{OutcomeFailed, fmt.Errorf("%s: no session header", fim.path)}
	}
	return nil
}

// once imports a file whose new part fits in one chunk in one pass and
// one transaction: entries are checked and appended as the reader yields
// them, while it parses the next ones. A file the mode refuses rolls the
// transaction back, so it leaves nothing behind, as in two passes. When
// the file turns out to hold more than a chunk (it grew since it was
// measured, or has many small entries) once returns errChunkFull, having
// written nothing.
func (fim *fileImport) once(progress func(int64)) error {
	var p *onePass
	err := fim.gate.update(fim.ctx, func(tx *engine.Tx) error {
		// The transaction may run more than once: start afresh.
		fim.restart()
		p = &onePass{fim: fim, tx: tx, pos: fim.resumeAt(), consumed: fim.start}
		// The file is hashed as the reader reads it, which is up to the
		// import's end unless a torn line is left for later.
		if h, from := fim.hashState(); from == fim.start {
			p.tee = &hashingReader{h: h, n: from}
		}
		return p.run()
	})
	if err != nil {
		return err
	}
	fim.res.Entries, fim.res.Bytes = p.entries, p.rec.ImportedBytes-fim.start
	fim.committed(p.rec, p.h)
	progress(fim.res.Bytes)
	return nil
}

// onePass is a one-pass import in its transaction.
type onePass struct {
	fim        *fileImport
	tx         *engine.Tx
	tee        *hashingReader // hashes the file as it is read, or nil
	st         *engine.Storage
	count      int64 // the session's entries before the import
	entries    int   // entries appended so far
	batch      []sessiontree.Entry
	batchBytes int
	pos        jsonl.Position // where the import ends so far
	consumed   int64
	rec        importRecord // the file's record, once written
	h          hash.Hash    // the hash state after the imported bytes
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
		if err := fim.takeHeader(p.tx.SQL(), r.Header); err != nil {
			return err
		}
	}
	fim.note(r, skip)
	if r.Kind == jsonl.KindTorn {
		return nil
	}
	if r.Kind == jsonl.KindEntry && skip == nil {
		p.batch = append(p.batch, r.Entry)
		p.batchBytes += len(r.Entry.Raw)
	}
	p.pos, p.consumed = r.Next, r.Next.Offset
	switch {
	case p.entries+len(p.batch) > importChunkEntries || p.consumed-fim.start > importChunkBytes:
		return errChunkFull
	case len(p.batch) >= appendEntries || p.batchBytes >= appendBytes:
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
		if err := p.tx.AppendBatch(p.st, p.batch); err != nil {
			return err
		}
		p.entries += len(p.batch)
		if afterAppend != nil {
			afterAppend()
		}
	}
	p.batch, p.batchBytes = dropBatch(p.batch), 0
	return nil
}

// record writes the file's record.
func (p *onePass) record() error {
	if p.tee != nil && p.tee.n == p.consumed {
		p.h = p.tee.h
	} else {
		var err error
		if p.h, err = p.fim.hashTo(p.consumed); err != nil {
			return err
		}
	}
	p.rec = importRecord{SessionID: p.st.ID(), ImportedBytes: p.consumed, PrefixSHA256: hex.EncodeToString(p.h.Sum(nil)),
		Position: p.pos, SessionEntries: p.count + int64(p.entries)}
	return p.fim.save(p.tx, &p.rec, true)
}

// twice imports a file in two passes. The first reads what is new and
// checks it all, writing nothing, so that a file the mode refuses leaves
// nothing behind. The second reads the same bytes again and commits them
// chunk by chunk, each chunk with the file's record, so that an import
// cut short (a crash, a cancellation) resumes where its last chunk ended.
func (fim *fileImport) twice(progress func(int64)) error {
	fim.restart()
	end, err := fim.check()
	if err != nil {
		return err
	}
	return fim.commit(end, progress)
}

// check is the first pass of twice: it reads and checks everything new,
// writes nothing, and returns how far the second pass is to read.
func (fim *fileImport) check() (int64, error) {
	end := fim.start
	err := fim.walk(-1, nil, func(r jsonl.Record, skip *jsonl.LineError) error {
		if r.Kind == jsonl.KindHeader {
			err := fim.s.db.View(fim.ctx, func(tx *sqlx.Tx) error { return fim.takeHeader(tx, r.Header) })
			if err != nil {
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
// and commits it a chunk at a time.
func (fim *fileImport) commit(end int64, progress func(int64)) error {
	var batch []sessiontree.Entry
	pos := fim.resumeAt()
	consumed := fim.start
	flush := func(final bool) error {
		if err := fim.chunk(batch, pos, consumed, final); err != nil {
			return err
		}
		fim.res.Entries += len(batch)
		fim.res.Bytes = consumed - fim.start
		batch = dropBatch(batch)
		progress(consumed - fim.start)
		return nil
	}
	chunkStart := consumed
	err := fim.walk(end-fim.start, nil, func(r jsonl.Record, skip *jsonl.LineError) error {
		if r.Kind == jsonl.KindTorn {
			return nil
		}
		if r.Kind == jsonl.KindEntry && skip == nil {
			batch = append(batch, r.Entry)
		}
		pos, consumed = r.Next, r.Next.Offset
		if len(batch) >= importChunkEntries || consumed-chunkStart >= importChunkBytes {
			chunkStart = consumed
			return flush(false)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush(true)
}

// dropBatch empties a batch of entries that are stored, for the next
// ones: it lets go of their JSON, which SQLite has copied, instead of
// holding it in the batch's array until the next entries overwrite it.
func dropBatch(batch []sessiontree.Entry) []sessiontree.Entry {
	clear(batch)
	return batch[:0]
}

// resumeAt is the reader's position where this import starts.
func (fim *fileImport) resumeAt() jsonl.Position {
	if fim.from != nil {
		return *fim.from
	}
	return jsonl.Position{}
}

// chunk commits entries, the file's bytes up to consumed, in one
// transaction with the file's record: the session (created by the first
// chunk of a new file) and where the next import resumes (pos).
func (fim *fileImport) chunk(entries []sessiontree.Entry, pos jsonl.Position, consumed int64, final bool) error {
	var rec importRecord
	var h hash.Hash
	err := fim.gate.update(fim.ctx, func(tx *engine.Tx) error {
		st, count, err := fim.session(tx)
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			if err := tx.AppendBatch(st, entries); err != nil {
				return err
			}
		}
		if h, err = fim.hashTo(consumed); err != nil {
			return err
		}
		rec = importRecord{SessionID: st.ID(), ImportedBytes: consumed, PrefixSHA256: hex.EncodeToString(h.Sum(nil)),
			Position: pos, SessionEntries: count + int64(len(entries))}
		return fim.save(tx, &rec, final)
	})
	if err != nil {
		return err
	}
	fim.committed(rec, h)
	return nil
}

// session opens the file's session in tx for this import's entries,
// creating the session of a new file, after checking that neither the
// file's record nor the session changed since the import read them. It
// returns the session and its entry count.
func (fim *fileImport) session(tx *engine.Tx) (*engine.Storage, int64, error) {
	ctx := fim.ctx
	cur, found, err := fim.recheck(tx.SQL())
	if err != nil {
		return nil, 0, err
	}
	var st *engine.Storage
	if !found {
		if st, err = tx.CreateSession(fim.meta); err != nil {
			if errors.Is(err, sessiontree.ErrConflict) {
				return nil, 0, conflict("session %s is already in the store", fim.meta.ID)
			}
			return nil, 0, err
		}
	} else if st, err = tx.OpenSession(cur.SessionID); err != nil {
		return nil, 0, err
	}
	if !found {
		return st, 0, nil
	}
	var count int64
	if err := tx.SQL().GetContext(ctx, &count, `SELECT entry_count FROM sessions WHERE pk = ?`, st.Key()); err != nil {
		return nil, 0, err
	}
	if count != cur.SessionEntries {
		return nil, 0, conflict("session %s was written to in the store meanwhile", cur.SessionID)
	}
	return st, count, nil
}

// hashState returns a copy of the import's SHA-256 state and how many of
// the file's first bytes it has hashed, leaving the import's as it is:
// the transaction that asks may run again.
func (fim *fileImport) hashState() (hash.Hash, int64) {
	if c, ok := fim.h.(hash.Cloner); ok {
		if clone, err := c.Clone(); err == nil {
			return clone, fim.hashed
		}
	}
	return sha256.New(), 0
}

// hashTo returns the SHA-256 state after the file's first n bytes.
func (fim *fileImport) hashTo(n int64) (hash.Hash, error) {
	h, from := fim.hashState()
	if _, err := io.Copy(h, io.NewSectionReader(fim.f, from, n-from)); err != nil {
		return nil, fmt.Errorf("hash: %w", err)
	}
	return h, nil
}

// hashingReader hashes what is read through it, so that one pass over a
// file both parses and hashes it; n counts the file's bytes hashed.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

// Read reads from the file and hashes what it read.
func (t *hashingReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.h.Write(p[:n])
	t.n += int64(n)
	return n, err
}

// save writes rec, the file's record, in tx. Its size is that of the
// imported part, or of the whole file after the last commit (final): a
// record of the file's size says "nothing new" to the next import, until
// the file changes, and before the last commit the record must say "more
// to import". The size is the one the import found before it read the
// file: lines added while it read are then new to the next import, even
// those it did not see.
func (fim *fileImport) save(tx *engine.Tx, rec *importRecord, final bool) error {
	rec.Size = rec.ImportedBytes
	if final {
		rec.Size = max(fim.fi.Size(), rec.ImportedBytes)
	}
	posJSON, err := json.Marshal(rec.Position)
	if err != nil {
		return err
	}
	_, err = tx.SQL().ExecContext(fim.ctx, `INSERT INTO imports (path, session_id, size, mtime_ns, imported_bytes,
    prefix_sha256, position, session_entries, imported_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id, size = excluded.size,
    mtime_ns = excluded.mtime_ns, imported_bytes = excluded.imported_bytes,
    prefix_sha256 = excluded.prefix_sha256, position = excluded.position,
    session_entries = excluded.session_entries, imported_at = excluded.imported_at`,
		fim.path, rec.SessionID, rec.Size, fim.fi.ModTime().UnixNano(), rec.ImportedBytes, rec.PrefixSHA256,
		string(posJSON), rec.SessionEntries, sessiontree.FormatTime(time.Now()))
	if err != nil {
		return fmt.Errorf("record import: %w", err)
	}
	return nil
}

// committed takes rec, the file's record, and h, the hash state after
// its imported bytes, as the ones a commit just wrote.
func (fim *fileImport) committed(rec importRecord, h hash.Hash) {
	if !fim.found {
		fim.res.Outcome = OutcomeNew
	}
	fim.found, fim.rec = true, rec
	fim.h, fim.hashed = h, rec.ImportedBytes
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

// rawSeed seeds rawHash. The hashes live only as long as one import, so
// a seed drawn at start-up serves.
var rawSeed = maphash.MakeSeed()

// rawHash is a 64-bit hash of an entry's JSON, never 0 (which checkEntry
// reads as "stored before this import"). maphash runs at memory speed;
// the import hashes every entry it reads.
func rawHash(b []byte) uint64 {
	return maphash.Bytes(rawSeed, b) | 1
}
