package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/fsx"
	"github.com/sessiontree/sessiontree/jsonl"
)

// PiSessionsDir returns the folder where pi keeps its session files, as
// pi 1.6.0 finds it: $PI_CODING_AGENT_SESSION_DIR when that variable is
// set, else $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions. A
// variable's leading ~ is the home folder and a file:// URL its path, as
// pi reads them. (pi's sessionDir setting, in its settings.json, is not
// read.)
func PiSessionsDir() (string, error) {
	if dir := os.Getenv("PI_CODING_AGENT_SESSION_DIR"); dir != "" {
		return piPath(dir)
	}
	agent := os.Getenv("PI_CODING_AGENT_DIR")
	if agent == "" {
		agent = filepath.Join("~", ".pi", "agent")
	}
	dir, err := piPath(agent)
	return filepath.Join(dir, "sessions"), err
}

// piPath reads a folder named in pi's environment as pi's normalizePath
// does: ~ and ~/... are below the home folder, a file:// URL is its path.
func piPath(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("pi sessions folder: %w", err)
		}
		return filepath.Join(home, p[1:]), nil
	}
	if strings.HasPrefix(p, "file://") {
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("pi sessions folder %s: %w", p, err)
		}
		return u.Path, nil
	}
	return p, nil
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

	// tune sizes the import's transactions; tests set it (see
	// internal_test.go), the zero value is the default.
	tune importTuning
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
// every chunk one transaction together with the file's record, the next
// chunk read and checked while one commits. The first pass of a new file
// runs ahead, on another core, while the files before it are written;
// only the store's answer about its header waits for its turn. Small
// new files (up to 256 KiB, as most of a pi folder's are) go in groups of
// up to 256 files or 4 MB, each group one transaction with every file's
// session, entries and record: a goroutine reads, checks and hashes the
// files ahead of the transactions, on another core. A file of a group
// that another import recorded meanwhile, or whose session the store
// has, is imported alone after the group, as is every file of a group
// whose transaction fails, so each file's result is what importing it
// alone says. An import cut short (canceled, crashed, a storage error)
// thus leaves a consistent prefix that the next import continues.
// Importing is idempotent:
//   - a file imported before and unchanged is only read to check its
//     hash; nothing is written;
//   - a file that has grown since (pi appends to its files) imports the
//     lines after the imported part, resuming the reader where it
//     stopped, into the same session;
//   - a file whose imported part changed, or whose session was written to
//     in the store since the import, is a conflict: reported, not merged;
//     so is a file whose last line imported, a whole entry without its
//     newline (which pi reads too), had the writer's next line run into
//     it: pi skips the merged line, and with it an entry the store holds;
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
// storing does. A store opened read-only ([sessiontree.Database.ReadOnly]) imports
// nothing: Import returns that error at once.
func (s *Store) Import(ctx context.Context, paths []string, opts ImportOptions) (ImportReport, error) {
	start := time.Now()
	var report ImportReport
	if err := s.d.ReadOnly(); err != nil {
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
	g := gate{d: s.d, noWait: opts.NoWait, waiting: opts.Waiting, grace: lockGrace}
	prog := &progressReport{fn: opts.Progress, p: ImportProgress{FilesTotal: len(files)}}
	for _, f := range files {
		prog.p.BytesTotal += f.size
	}
	done := make(chan struct{})
	batches := s.readAhead(ctx, files, opts, done)
	defer func() {
		close(done)
		for b := range batches { // the reader has finished once it is closed
			b.discard()
		}
	}()
	imp := &importRun{s: s, ctx: ctx, g: g, opts: opts, prog: prog, report: &report}
	for b := range batches {
		if err := imp.batch(b); err != nil {
			report.Duration = time.Since(start)
			return report, err
		}
	}
	prog.file("", 0)
	report.Duration = time.Since(start)
	return report, nil
}

// importRun is one run of [Store.Import] as it takes the batches its
// reader hands it (readAhead), keeping its report.
type importRun struct {
	s      *Store
	ctx    context.Context
	g      gate
	opts   ImportOptions
	prog   *progressReport
	report *ImportReport
}

// batch imports one batch of files: a group in one transaction, or one
// file alone. A non-nil error stops the import.
func (imp *importRun) batch(b importBatch) error {
	if b.group == nil {
		return imp.alone(b)
	}
	if err := imp.ctx.Err(); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	imp.prog.file(b.group[0].c.path, 0)
	results, err := imp.s.importGroup(imp.ctx, imp.g, b.group, imp.opts)
	if err != nil {
		// NoWait and another process writing: no file of the group was
		// imported, nor are the files after it.
		return fmt.Errorf("import: %w", lockedError(imp.s.d))
	}
	for i, sf := range b.group {
		if results[i] == nil {
			if err := imp.alone(importBatch{alone: sf.c}); err != nil {
				return err
			}
			continue
		}
		if i > 0 {
			imp.prog.file(sf.c.path, 0)
		}
		imp.done(*results[i], sf.c.size)
	}
	return nil
}

// alone imports the file of batch b alone (importFile), unless its
// result is known already (see importBatch).
func (imp *importRun) alone(b importBatch) error {
	f := b.alone
	if err := imp.ctx.Err(); err != nil {
		b.discard()
		return fmt.Errorf("import: %w", err)
	}
	imp.prog.file(f.path, 0)
	var res FileResult
	switch {
	case b.known != nil:
		res = *b.known
	case f.err != nil:
		res = FileResult{Path: f.path, Outcome: OutcomeFailed, Err: f.err}
	default:
		res = imp.s.importFile(imp.ctx, imp.g, f.path, imp.opts, imp.prog, b.checked)
	}
	if lockHeld(res.Err) && res.Entries == 0 {
		// NoWait and another process writing: the file was not
		// imported, nor tried; the files after it are not either.
		return fmt.Errorf("import: %w", lockedError(imp.s.d))
	}
	imp.done(res, f.size)
	if errors.Is(res.Err, sessiontree.ErrClosed) || imp.ctx.Err() != nil {
		return fmt.Errorf("import %s: %w", f.path, cmpErr(imp.ctx.Err(), res.Err))
	}
	return nil
}

// done takes a file's result, of size bytes, into the report.
func (imp *importRun) done(res FileResult, size int64) {
	r := imp.report
	r.Files = append(r.Files, res)
	r.Entries += res.Entries
	r.Bytes += res.Bytes
	imp.prog.p.FilesDone++
	imp.prog.p.BytesDone += size
}

// progressReport tells [ImportOptions.Progress], when set, how far an
// import is: p counts the files finished.
type progressReport struct {
	fn func(ImportProgress)
	p  ImportProgress
}

// file reports file ("" at the end) as being imported, done of its bytes
// finished.
func (r *progressReport) file(file string, done int64) {
	if r.fn != nil {
		q := r.p
		q.File, q.BytesDone = file, r.p.BytesDone+done
		r.fn(q)
	}
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
