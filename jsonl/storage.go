package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/jsonx"
	"github.com/sessiontree/sessiontree/memory"
)

var (
	_ sessiontree.Storage       = (*Storage)(nil)
	_ sessiontree.BatchAppender = (*Storage)(nil)
)

// now is the clock for headers and sidecar names; a test seam.
var now = time.Now

// afterSizeCheck, when set, runs in [Storage.cut] between the check of
// the file's size and the cut; afterRewrite in [Storage.Upgrade] once the
// new file is written, before the old one is checked again and replaced.
// Test seams.
var afterSizeCheck, afterRewrite func()

// fileIO are the calls that write, sync and cut the files the storage
// writes (the session file, an upgrade's new file): the operating
// system's. A test seam, to fail them part way.
var fileIO = struct {
	write    func(f *os.File, b []byte) (int, error)
	sync     func(f *os.File) error
	truncate func(f *os.File, size int64) error
}{(*os.File).Write, (*os.File).Sync, (*os.File).Truncate}

// Options configure [Open] and [Create]. The zero value opens a file for
// writing in [Recover] mode without syncing.
type Options struct {
	// ReadOnly opens without the write lock: never blocked by a writer,
	// never blocking one, and every write fails with
	// [sessiontree.ErrReadOnly]. The file is read once and closed.
	ReadOnly bool
	// Mode is how much damage opening tolerates.
	Mode Mode
	// Sync makes every append fsync the file before it returns (once per
	// batch for AppendBatch). Off by default, as in pi: an append then
	// survives a crash of the process but not of the machine.
	Sync bool
	// MaxLineBytes bounds the length of a line read, as
	// [ReadOptions.MaxLineBytes]: 0 means [DefaultMaxLineBytes]. A
	// longer line refuses the file (in every mode) with a [*LineError]
	// whose Err is a [*LineTooLongError].
	MaxLineBytes int
}

// Report tells what opening a file found.
type Report struct {
	// Version is the version in the file's header: 1, 2 or 3. Files of
	// versions 1 and 2 are migrated in memory; see [Storage.Upgrade].
	Version int
	// Lines is the number of lines read, the header included.
	Lines int
	// Entries is the number of entries loaded.
	Entries int
	// Warnings lists every line skipped (any bad line in [Lenient] mode,
	// a torn line ended by a newline in [Recover] mode too) and the torn
	// last line, in file order.
	Warnings []*LineError
	// Torn describes the torn last line, nil when the file ends cleanly.
	Torn *TornTail
	// Unknown counts the loaded entries whose type this version does not
	// know (a newer pi wrote them). They are kept byte for byte and read
	// like any other entry: a warning to show once for the file
	// ([sessiontree.UnknownTypes.String]), not damage.
	Unknown sessiontree.UnknownTypes

	torn []byte // the torn bytes, for the sidecar
}

// TornTail is a partial last line found when opening.
type TornTail struct {
	// Line is its line number.
	Line int
	// Offset is where it starts in the file.
	Offset int64
	// Size is its length in bytes.
	Size int
	// Sidecar is the file its bytes were copied to, "<file>.torn-<time>",
	// when the file was opened for writing; "" for a read-only open,
	// which changes nothing.
	Sidecar string
}

// Storage is a session kept in one pi session file: an in-memory index
// (a [memory.Storage]) of the file's entries, and the file, to which
// every new entry is appended as one line. It is safe for concurrent use:
// reads share the index's lock, writes are serialized.
type Storage struct {
	mem    *memory.Storage
	path   string
	opts   Options
	header Header
	report Report
	state  stateLinks

	// loading is true while Open reads the file into mem; the append hook
	// writes nothing then. It is set before mem is shared and never after.
	loading bool

	// wmu serializes writers (Append, SetLeaf, AppendBatch, Upgrade,
	// Close) and guards every field below. The memory index calls
	// onAppend while a writer holds it.
	wmu         sync.Mutex
	f           *os.File // the locked file; nil when read-only or closed
	closed      bool
	version     int   // the file's version on disk
	size        int64 // the file's size as this storage left it
	tornAt      int64 // start of a torn tail to cut before the next write, or -1
	needNewline bool  // the file's last line lacks its newline
	inBatch     bool
	broken      error // set when a failed write could not be undone
	buf         []byte
}

// Create makes a new session file at path, which must not exist, and
// opens it for writing. The header gets meta's id (a fresh UUID v7 when
// empty; one pi could not resume is refused,
// [sessiontree.CheckNewSessionID]), timestamp (now when empty), cwd and parentSession; meta.Version
// must be 0 or 3. opts.ReadOnly is not allowed.
func Create(ctx context.Context, path string, meta sessiontree.SessionMeta, opts Options) (*Storage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		return nil, fmt.Errorf("create %s: %w", path, sessiontree.ErrReadOnly)
	}
	if meta.Version != 0 && meta.Version != CurrentVersion {
		return nil, fmt.Errorf("create %s: %w: version %d", path, ErrUnsupportedVersion, meta.Version)
	}
	meta.Version = CurrentVersion
	if err := sessiontree.CheckNewSessionID(meta.ID); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if meta.ID == "" {
		id, err := sessiontree.NewSessionID()
		if err != nil {
			return nil, fmt.Errorf("create %s: new session id: %w", path, err)
		}
		meta.ID = id
	}
	if meta.CreatedAt == "" {
		meta.CreatedAt = sessiontree.FormatTime(now())
	}
	line := HeaderLine(meta)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create %s: %w: %w", path, sessiontree.ErrConflict, err)
		}
		return nil, fmt.Errorf("create %s: %w: %w", path, sessiontree.ErrStorage, err)
	}
	fail := func(err error) (*Storage, error) {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		_ = f.Close() // someone else locked it already: the file is theirs
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := fileIO.write(f, line); err != nil {
		return fail(fmt.Errorf("write header: %w: %w", sessiontree.ErrStorage, err))
	}
	if opts.Sync {
		if err := fileIO.sync(f); err != nil {
			return fail(fmt.Errorf("sync: %w: %w", sessiontree.ErrStorage, err))
		}
		if err := syncDir(filepath.Dir(path)); err != nil {
			return fail(fmt.Errorf("sync directory: %w: %w", sessiontree.ErrStorage, err))
		}
	}
	s := &Storage{path: path, opts: opts, f: f, version: CurrentVersion, size: int64(len(line)), tornAt: -1}
	s.header = Header{SessionMeta: meta, Raw: bytes.TrimSpace(line)}
	s.report = Report{Version: CurrentVersion, Lines: 1}
	if s.mem, err = memory.New(meta, memory.Options{OnAppend: s.onAppend}); err != nil {
		return fail(err)
	}
	return s, nil
}

// HeaderLine is the header line pi writes for a session of meta, in
// format version 3, as JavaScript's JSON.stringify writes it (members in
// pi's order, strings by [jsonx.AppendString]), with its line feed: the
// one writer of a header, for a new file and for an export.
func HeaderLine(meta sessiontree.SessionMeta) []byte {
	b := []byte(`{"type":"session","version":3,"id":`)
	b = jsonx.AppendString(b, meta.ID)
	b = append(b, `,"timestamp":`...)
	b = jsonx.AppendString(b, meta.CreatedAt)
	b = append(b, `,"cwd":`...)
	b = jsonx.AppendString(b, meta.Cwd)
	if meta.ParentSession != "" {
		b = append(b, `,"parentSession":`...)
		b = jsonx.AppendString(b, meta.ParentSession)
	}
	return append(b, "}\n"...)
}

// Open opens the session file at path: it reads every line, checks the
// tree, migrates older versions in memory and sets the leaf by the leaf
// rule. Unless opts.ReadOnly, it first takes the file's write lock, and a
// second writer gets [sessiontree.ErrLocked]. Bad input gives a
// [*LineError]; what was tolerated is in [Storage.Report]. A file that
// does not exist gives [sessiontree.ErrNotFound]; a path that names
// something other than a regular file (a named pipe, a device, a
// directory) gives a [*sessiontree.NotRegularFileError] before anything
// is read from it.
func Open(ctx context.Context, path string, opts Options) (*Storage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var f *os.File
	var err error
	if opts.ReadOnly {
		if f, err = openFile(path, os.O_RDONLY); err != nil {
			return nil, err
		}
	} else if f, err = openLocked(path); err != nil {
		return nil, err
	}
	s := &Storage{path: path, opts: opts, f: f, tornAt: -1, loading: true}
	l := &loader{ctx: ctx, path: path, mode: opts.Mode, maxLine: opts.MaxLineBytes, onAppend: s.onAppend, state: &s.state}
	if err := l.load(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	s.loading = false
	s.mem, s.header, s.report = l.mem, l.header, l.report
	s.version = l.header.Version
	if opts.ReadOnly {
		s.f = nil
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("close %s: %w: %w", path, sessiontree.ErrStorage, err)
		}
		return s, nil
	}
	s.size = l.consumed
	if t := s.report.Torn; t != nil {
		sidecar, err := writeSidecar(path, s.report.torn)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("open %s: keep torn line aside: %w: %w", path, sessiontree.ErrStorage, err)
		}
		t.Sidecar = sidecar
		s.tornAt = t.Offset
	} else {
		s.needNewline = l.consumed > 0 && l.lastByte != '\n'
	}
	return s, nil
}

// openLocked opens path for reading and appending and takes its write
// lock. Another process may replace the file by a rename (an upgrade)
// between the open and the lock; the lock would then be on a file that is
// no longer at path, so it checks and tries again.
func openLocked(path string) (*os.File, error) {
	for range 10 {
		f, err := openFile(path, os.O_RDWR|os.O_APPEND)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		held, herr := f.Stat()
		atPath, perr := os.Stat(path)
		if herr == nil && perr == nil && os.SameFile(held, atPath) {
			return f, nil
		}
		_ = f.Close()
		if perr != nil && errors.Is(perr, fs.ErrNotExist) {
			return nil, openError(path, perr)
		}
	}
	return nil, fmt.Errorf("open %s: the file keeps being replaced: %w", path, sessiontree.ErrLocked)
}

// writeSidecar copies torn bytes to a new file next to path, durably, and
// returns its name.
func writeSidecar(path string, data []byte) (string, error) {
	base := path + ".torn-" + now().UTC().Format("20060102T150405.000000000Z")
	name := base
	for i := 1; ; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			name = base + "." + strconv.Itoa(i)
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = fileIO.write(f, data)
		if err == nil {
			err = fileIO.sync(f)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = syncDir(filepath.Dir(path))
		}
		if err != nil {
			_ = os.Remove(name)
			return "", err
		}
		return name, nil
	}
}

// File returns the path of the session file.
func (s *Storage) File() string { return s.path }

// ID returns the session id, the header's, which never changes.
func (s *Storage) ID() string { return s.header.ID }

// Header returns the file's header as it was read (or written, for a
// created file); its Version is the version found in the file.
func (s *Storage) Header() Header { return s.header }

// Report returns what opening the file found.
func (s *Storage) Report() Report {
	r := s.report
	r.Warnings = append([]*LineError(nil), r.Warnings...)
	r.Unknown = append(sessiontree.UnknownTypes(nil), r.Unknown...)
	if r.Torn != nil {
		t := *r.Torn
		r.Torn = &t
	}
	r.torn = nil
	return r
}

// prepare checks that the storage may write and readies the file: the
// torn tail, kept in its sidecar since Open, is cut, and a last line
// without newline gets one, so the next entry starts on a clean line. The
// caller holds wmu.
func (s *Storage) prepare() error {
	switch {
	case s.closed:
		return sessiontree.ErrClosed
	case s.f == nil:
		return fmt.Errorf("write %s: %w", s.path, sessiontree.ErrReadOnly)
	case s.broken != nil:
		return s.broken
	case s.version != CurrentVersion:
		return fmt.Errorf("write %s: a version-%d file must be upgraded (Storage.Upgrade) before it is written: %w",
			s.path, s.version, sessiontree.ErrReadOnly)
	}
	if err := s.sized(s.size); err != nil {
		return fmt.Errorf("write %s: %w; reopen it", s.path, err)
	}
	if s.tornAt >= 0 {
		// The one place a user's file is cut in place: the bytes are a
		// partial line no reader can use, copied to the sidecar (and
		// synced) when the file was opened, and cut checks that nobody
		// finished the line since. Rewriting the whole file instead
		// would cost its size and change the inode under readers.
		if err := s.cut(s.tornAt, s.size); err != nil {
			return fmt.Errorf("cut torn line of %s: %w", s.path, err)
		}
		s.size, s.tornAt = s.tornAt, -1
	}
	if s.needNewline {
		n, err := fileIO.write(s.f, []byte{'\n'})
		s.size += int64(n)
		if err != nil {
			return fmt.Errorf("write %s: %w: %w", s.path, sessiontree.ErrStorage, err)
		}
		s.needNewline = false
	}
	return nil
}

// onAppend writes one entry as one line with one write. It runs inside
// the memory index's write lock, called by a writer holding wmu, before
// the entry is indexed: an error leaves the index unchanged.
func (s *Storage) onAppend(ctx context.Context, e sessiontree.Entry) error {
	if s.loading {
		return nil
	}
	buf := append(s.buf[:0], e.Raw...)
	buf = append(buf, '\n')
	if cap(buf) <= 1<<20 {
		s.buf = buf
	}
	before := s.size
	n, err := fileIO.write(s.f, buf)
	if err != nil {
		return s.undo(before, int64(n), fmt.Errorf("write entry %s to %s: %w: %w", e.ID, s.path, sessiontree.ErrStorage, err))
	}
	s.size += int64(n)
	if s.opts.Sync && !s.inBatch {
		if err := fileIO.sync(s.f); err != nil {
			return s.undo(before, int64(n), fmt.Errorf("sync %s: %w: %w", s.path, sessiontree.ErrStorage, err))
		}
	}
	return nil
}

// undo cuts the file back to size before, the last size the index agrees
// with, after a failed write that left written bytes after it. If that
// fails too, the storage stops writing: reopen it to see what the file
// holds.
func (s *Storage) undo(before, written int64, err error) error {
	s.size = before
	if written == 0 {
		return err
	}
	if cerr := s.cut(before, before+written); cerr != nil {
		s.broken = fmt.Errorf("%w (and undoing it failed: %v; reopen the session)", err, cerr)
		return s.broken
	}
	return err
}

// sized checks that the file has want bytes, the size this storage left
// it at, and is still named by a path: only a writer that ignores the
// lock (pi itself) changes its size, and a file deleted or replaced by
// another renamed over it (an atomic save) would keep a write where no
// one finds it; either is an error matching [sessiontree.ErrConflict].
func (s *Storage) sized(want int64) error {
	size, linked, err := fileSize(s.f)
	if err != nil {
		return fmt.Errorf("stat: %w: %w", sessiontree.ErrStorage, err)
	}
	if !linked && !s.atPath() {
		return fmt.Errorf("%w: the file was deleted or replaced since this storage opened it", sessiontree.ErrConflict)
	}
	if size != want {
		return fmt.Errorf("%w: the file changed since this storage wrote it (%d bytes, want %d): another writer wrote to it",
			sessiontree.ErrConflict, size, want)
	}
	return nil
}

// atPath tells whether the storage's path still names its file. It is
// asked only when the file says no path names it, to be sure: a file
// system may not count links.
func (s *Storage) atPath() bool {
	held, herr := s.f.Stat()
	now, perr := os.Stat(s.path)
	return herr == nil && perr == nil && os.SameFile(held, now)
}

// cut cuts the file back to size to, provided it still has want bytes,
// the size this storage knows, so that the bytes cut are the ones it
// knows of (its own partial write, a torn line kept in its sidecar),
// never those of a writer that ignores the lock (pi). The size is
// checked and the file cut while a lease keeps other processes from
// opening the file (holdOpens), where the system has one; see the
// package doc's "One writer" for what remains without. A file of another
// size is left as it is, an error matching [sessiontree.ErrConflict].
func (s *Storage) cut(to, want int64) error {
	release, _ := holdOpens(s.f)
	defer release()
	if err := s.sized(want); err != nil {
		return fmt.Errorf("%w; nothing cut", err)
	}
	if afterSizeCheck != nil {
		afterSizeCheck()
	}
	if err := fileIO.truncate(s.f, to); err != nil {
		return fmt.Errorf("truncate: %w: %w", sessiontree.ErrStorage, err)
	}
	return nil
}

// Append adds an entry under the current leaf and writes it to the file.
// Fields with line breaks between tokens are written (and kept) with
// spaces instead, as a JSONL line must.
func (s *Storage) Append(ctx context.Context, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	d.Fields = jsonx.OneLine(d.Fields)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.prepare(); err != nil {
		return sessiontree.Entry{}, err
	}
	return s.linked(s.mem.Append(ctx, d, opts))
}

// AppendUnder appends an entry under parent, not the current leaf, as
// Append does: one line, so the move and the entry are one write (pi's
// branch with a summary).
func (s *Storage) AppendUnder(ctx context.Context, parent string, d sessiontree.Draft, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	d.Fields = jsonx.OneLine(d.Fields)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.prepare(); err != nil {
		return sessiontree.Entry{}, err
	}
	return s.linked(s.mem.AppendUnder(ctx, parent, d, opts))
}

// linked records the state links of a newly appended entry. The caller
// holds wmu, so entries arrive in order.
func (s *Storage) linked(e sessiontree.Entry, err error) (sessiontree.Entry, error) {
	if err != nil {
		return e, err
	}
	s.link(e)
	return e, nil
}

func (s *Storage) link(e sessiontree.Entry) {
	var parentSeq int64
	if e.ParentID != "" {
		// Not found only if closed meanwhile; the links then do not matter.
		p, _ := s.mem.Entry(context.Background(), e.ParentID)
		parentSeq = p.Seq
	}
	s.state.add(e, parentSeq)
}

// SetLeaf appends a leaf entry moving the leaf to target.
func (s *Storage) SetLeaf(ctx context.Context, target string, opts sessiontree.AppendOptions) (sessiontree.Entry, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.prepare(); err != nil {
		return sessiontree.Entry{}, err
	}
	return s.linked(s.mem.SetLeaf(ctx, target, opts))
}

// AppendBatch appends entries that carry their own ids, parents and
// timestamps, as when copying a session, checking each as
// [memory.Storage.AppendBatch] does. On error neither the index nor the
// file keeps any of the batch.
func (s *Storage) AppendBatch(ctx context.Context, entries []sessiontree.Entry) error {
	batch := make([]sessiontree.Entry, len(entries))
	for i, e := range entries {
		e.Raw = jsonx.OneLine(e.Raw)
		batch[i] = e
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.prepare(); err != nil {
		return err
	}
	start := s.size
	s.inBatch = true
	err := s.mem.AppendBatch(ctx, batch)
	s.inBatch = false
	if err == nil && s.opts.Sync && s.size != start {
		if err = fileIO.sync(s.f); err != nil {
			// The index holds the batch; the file may not. Stop writing.
			s.broken = fmt.Errorf("sync %s: %w: %w (reopen the session)", s.path, sessiontree.ErrStorage, err)
			err = s.broken
		}
	}
	if err != nil && s.size != start && s.broken == nil {
		err = s.undo(start, s.size-start, err)
	}
	if err == nil {
		for _, e := range batch {
			if stored, gerr := s.mem.Entry(ctx, e.ID); gerr == nil {
				s.link(stored)
			}
		}
	}
	return err
}

// Upgrade rewrites a version-1 or version-2 file in the current version:
// the header with version 3 (its other fields kept) and every entry as
// this storage holds it, migrated. It writes a temporary file next to the
// original, syncs it, renames it over the original and syncs the
// directory, so a crash leaves either file whole; the new file is locked
// before it replaces the old one. A current file is left alone. It
// refuses when opening skipped lines ([Lenient] mode), which the rewrite
// would lose. A file opened through a symbolic link is rewritten where
// the link points; the link stays.
func (s *Storage) Upgrade(ctx context.Context) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	switch {
	case s.closed:
		return sessiontree.ErrClosed
	case s.f == nil:
		return fmt.Errorf("upgrade %s: %w", s.path, sessiontree.ErrReadOnly)
	case s.broken != nil:
		return s.broken
	case s.version == CurrentVersion:
		return nil
	}
	skipped := len(s.report.Warnings)
	if s.report.Torn != nil {
		skipped-- // its bytes are in the sidecar
	}
	if skipped > 0 {
		return fmt.Errorf("upgrade %s: %w: %d bad lines were skipped when opening; the rewrite would drop them",
			s.path, sessiontree.ErrCorrupt, skipped)
	}
	fi, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("upgrade %s: %w: %w", s.path, sessiontree.ErrStorage, err)
	}
	if err := s.sized(s.size); err != nil {
		return fmt.Errorf("upgrade %s: %w; reopen it", s.path, err)
	}
	entries, err := s.mem.Log(ctx, 0, 0)
	if err != nil {
		return fmt.Errorf("upgrade %s: %w", s.path, err)
	}
	// A path that is a symbolic link is upgraded at its target: renaming
	// over the link would replace the link by a copy.
	target, err := filepath.EvalSymlinks(s.path)
	if err != nil {
		return fmt.Errorf("upgrade %s: %w: %w", s.path, sessiontree.ErrStorage, err)
	}
	tmp, size, err := s.writeUpgraded(ctx, target, fi.Mode().Perm(), entries)
	if err != nil {
		return fmt.Errorf("upgrade %s: %w", s.path, err)
	}
	if afterRewrite != nil {
		afterRewrite()
	}
	drop := func() {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
	}
	// Checked again right before the rename: a line another writer
	// appended while the new file was written would be lost with the old
	// one (see the package doc for the moment that remains).
	if err := s.sized(s.size); err != nil {
		drop()
		return fmt.Errorf("upgrade %s: %w; reopen it", s.path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		drop()
		return fmt.Errorf("upgrade %s: %w: %w", s.path, sessiontree.ErrStorage, err)
	}
	old := s.f
	s.f, s.version, s.size, s.tornAt, s.needNewline = tmp, CurrentVersion, size, -1, false
	_ = old.Close() // releases the old file's lock; openLocked sees it is no longer at path
	if err := syncDir(filepath.Dir(target)); err != nil {
		return fmt.Errorf("upgrade %s: sync directory: %w: %w", s.path, sessiontree.ErrStorage, err)
	}
	return nil
}

// writeUpgraded writes the migrated file to a locked temporary file in the
// directory of target, the file it is to replace, and syncs it.
func (s *Storage) writeUpgraded(ctx context.Context, target string, perm fs.FileMode, entries []sessiontree.Entry) (*os.File, int64, error) {
	dir, base := filepath.Split(target)
	var tmp *os.File
	var err error
	for i := 0; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf(".%s.upgrade-%d-%d.tmp", base, os.Getpid(), now().UnixNano()+int64(i)))
		tmp, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err == nil || !errors.Is(err, fs.ErrExist) || i >= 100 {
			break
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", sessiontree.ErrStorage, err)
	}
	fail := func(err error) (*os.File, int64, error) {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return nil, 0, err
	}
	if err := lockFile(tmp); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(fmt.Errorf("%w: %w", sessiontree.ErrStorage, err))
	}
	cw := &countingWriter{w: tmp}
	w := bufio.NewWriterSize(cw, 1<<20)
	w.Write(upgradedHeader(s.header.Raw))
	w.WriteByte('\n')
	for i, e := range entries {
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return fail(err)
			}
		}
		w.Write(e.Raw)
		w.WriteByte('\n')
	}
	err = w.Flush()
	if err == nil {
		err = fileIO.sync(tmp)
	}
	if err != nil {
		return fail(fmt.Errorf("write %s: %w: %w", tmp.Name(), sessiontree.ErrStorage, err))
	}
	return tmp, cw.n, nil
}

type countingWriter struct {
	w *os.File
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := fileIO.write(c.w, p)
	c.n += int64(n)
	return n, err
}

// Upgrade opens the file at path for writing and upgrades it (see
// [Storage.Upgrade]). It returns the version the file had.
func Upgrade(ctx context.Context, path string, opts Options) (int, error) {
	opts.ReadOnly = false
	s, err := Open(ctx, path, opts)
	if err != nil {
		return 0, err
	}
	from := s.report.Version
	err = s.Upgrade(ctx)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return from, err
}

// Close releases the file and its lock. Further calls on the storage
// return [sessiontree.ErrClosed]; closing twice is a no-op.
func (s *Storage) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	_ = s.mem.Close()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	if err != nil {
		return fmt.Errorf("close %s: %w: %w", s.path, sessiontree.ErrStorage, err)
	}
	return nil
}

// Meta returns the session's metadata; its Version is always the current
// one, as entries are migrated when read.
func (s *Storage) Meta(ctx context.Context) (sessiontree.SessionMeta, error) { return s.mem.Meta(ctx) }

// Leaf returns the current leaf id, "" when the leaf is null.
func (s *Storage) Leaf(ctx context.Context) (string, error) { return s.mem.Leaf(ctx) }

// NewEntryID returns an unused 8-hex-character id.
func (s *Storage) NewEntryID(ctx context.Context) (string, error) { return s.mem.NewEntryID(ctx) }

// Entry returns one entry by id.
func (s *Storage) Entry(ctx context.Context, id string) (sessiontree.Entry, error) {
	return s.mem.Entry(ctx, id)
}

// EntriesByType returns every entry of type t in append order.
func (s *Storage) EntriesByType(ctx context.Context, t sessiontree.EntryType) ([]sessiontree.Entry, error) {
	return s.mem.EntriesByType(ctx, t)
}

// Label returns the current label of an entry, "" when it has none.
func (s *Storage) Label(ctx context.Context, id string) (string, error) { return s.mem.Label(ctx, id) }

// Labels returns every current label by target id.
func (s *Storage) Labels(ctx context.Context) (map[string]string, error) { return s.mem.Labels(ctx) }

// Name returns the session name, "" when it has none.
func (s *Storage) Name(ctx context.Context) (string, error) { return s.mem.Name(ctx) }

// Stats returns counts and usage totals over the whole log.
func (s *Storage) Stats(ctx context.Context) (sessiontree.Stats, error) { return s.mem.Stats(ctx) }

// Path returns the path from an entry to the root or the compaction
// boundary, root first.
func (s *Storage) Path(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return s.mem.Path(ctx, from)
}

// FullPath returns the path from an entry to the root, root first.
func (s *Storage) FullPath(ctx context.Context, from string) ([]sessiontree.Entry, error) {
	return s.mem.FullPath(ctx, from)
}

// Log returns up to limit entries with Seq > after, in append order.
func (s *Storage) Log(ctx context.Context, after int64, limit int) ([]sessiontree.Entry, error) {
	return s.mem.Log(ctx, after, limit)
}
