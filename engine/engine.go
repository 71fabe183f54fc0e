package engine

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/fsx"
	"github.com/sessiontree/sessiontree/migrate"
)

// ApplicationID is the PRAGMA application_id of a sessiontree database
// ("stre" in ASCII). [Open] refuses a SQLite file that carries another.
const ApplicationID int32 = 0x73747265

// Synchronous is the PRAGMA synchronous level of the database connections.
type Synchronous int

const (
	// SyncNormal (the default) syncs the write-ahead log at checkpoints
	// only: a commit survives a crash of the process, and an operating
	// system crash or power loss may lose the last commits but never
	// corrupts the database.
	SyncNormal Synchronous = iota
	// SyncFull syncs the log at every commit, so a commit also survives
	// power loss, at the cost of one fsync per write.
	SyncFull
)

func (s Synchronous) pragma() string {
	if s == SyncFull {
		return "FULL"
	}
	return "NORMAL"
}

// Options configure [Open]. The zero value works.
type Options struct {
	// Synchronous is the durability level; the zero value is SyncNormal.
	Synchronous Synchronous
	// BusyTimeout is how long a write waits for another process's write
	// transaction before it gives up with sessiontree.ErrLocked; 0 means
	// 5 seconds.
	BusyTimeout time.Duration
	// MaxReaders bounds the pooled read connections; 0 means 4.
	MaxReaders int
	// CacheSizeKiB is the page cache of each connection; 0 means 16 MiB
	// for each read connection and 4 MiB for the write connection (see
	// writeCacheKiB).
	CacheSizeKiB int
	// Now is the clock that stamps entries without a timestamp and the
	// records of new sessions; nil means time.Now.
	Now func() time.Time
	// MaxSize bounds the database's size, in bytes (whole pages of 4
	// KiB): a write that would grow it beyond fails with
	// sessiontree.ErrDiskFull, as on a full disk, and leaves nothing
	// behind. 0 means no bound but the disk's. A database already larger
	// keeps its size and does not grow.
	MaxSize int64
	// CheckLookups bounds how much of the search index a check of the
	// whole database compares with the entries' text: the trigrams of
	// sampled entries it looks up in the index (see indexcheck.go). 0
	// means 5000, about a second in a store of 430,000 entries; a
	// session's check looks up a tenth as many. Fewer make a check
	// cheaper and its sample smaller.
	CheckLookups int
	// MmapSize is how many bytes of the database file each read
	// connection maps into memory (PRAGMA mmap_size) and reads in place,
	// instead of copying every page it reads with a system call; SQLite
	// caps it at its build's limit. 0, the default, maps nothing. A
	// process reading a fresh file saves about 0.5 ms of a 100,000-entry
	// resume this way (issue 17). The cost: a mapped page the system
	// cannot read (the file cut short by another program, a failing
	// disk) is a memory fault in the reading goroutine, where a read
	// would have returned an error. A program that sets it should read
	// inside CatchFaults, which returns such a fault as a *FaultError,
	// as the sessiontree command does; the write connection never maps.
	MmapSize int64
}

func (o Options) withDefaults() Options {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.MaxReaders <= 0 {
		o.MaxReaders = 4
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CheckLookups <= 0 {
		o.CheckLookups = indexSampleLookups
	}
	return o
}

const (
	readCacheKiB = 16 << 10
	// writeCacheKiB is smaller because every cached page costs the write
	// connection's commits: when an insert splits a page in the middle
	// of a b-tree (the UNIQUE (session, id) index, whose ids are random),
	// SQLite renumbers the new pages through a spare page number beyond
	// the end of the file, and the commit after it then scans the whole
	// page cache to drop pages past the end. With 16 MiB that scan was
	// about 4% of an append's CPU time in BenchmarkAppend's profile, and
	// its wall time fell by about a tenth with 4 MiB, which still holds
	// the pages an append touches in a session of 100,000 entries.
	writeCacheKiB = 4 << 10
)

// pageSize is the size of a database page: SQLite's default, which the
// engine never changes.
const pageSize = 4096

// cacheKiB is the page cache of a connection.
func (o Options) cacheKiB(write bool) int {
	switch {
	case o.CacheSizeKiB > 0:
		return o.CacheSizeKiB
	case write:
		return writeCacheKiB
	}
	return readCacheKiB
}

// DB is one database file holding many sessions. It keeps two connection
// pools on the file: one connection for writes, whose transactions begin
// IMMEDIATE so writers of this and other processes queue on SQLite's write
// lock instead of failing halfway, and a pool of query-only connections
// for reads, which under WAL never wait for the writer.
//
// A DB is safe for concurrent use. Close it when done; [Storage] values
// opened from it stop working then.
type DB struct {
	path string
	opts Options
	drv  *sqlite.Driver // opens both pools' connections (see newDriver)
	w    *sqlx.DB       // the single write connection
	r    *sqlx.DB       // query-only readers
	wc   *connector     // makes the write connection
	rc   *connector     // makes the readers' connections
	cp   *checkpointer  // see checkpoint.go; nil until the first commit
	// cpOnce starts cp (or, at Close, makes sure it never starts).
	cpOnce sync.Once

	group groupCommit // concurrent appends share a transaction (group.go)

	// ro is why the database is opened for reading only (readonly.go),
	// nil when it is writable; then rmode says how it is read.
	ro    *ReadOnlyError
	rmode readMode

	// current is what the file's header said at Open: the database is
	// ours, in WAL mode, at the latest schema version (see fastOpen).
	current bool

	closed atomic.Bool
}

// Open opens the database at path, creating it (mode 0600, missing
// directories 0700) when it does not exist, and applies pending
// migrations. An empty file is taken as a database not made yet, and
// gets mode 0600 (and so do the -wal and -shm files SQLite makes beside
// it). A file that is not a SQLite database, a SQLite database of another
// application, or one written by a newer version of this program is
// refused with [ErrNotDatabase], [ErrForeign] or [ErrNewer] and left
// untouched; a path that names something other than a regular file (a
// named pipe, a device, a directory) with a
// [*sessiontree.NotRegularFileError], before anything reads it, and so is
// a -wal or -shm file beside it that is not a regular file.
//
// A database that SQLite could not write (on a read-only file system, in
// a folder or a file this process may not write, on a file system too
// full to make its -shm file) is opened for reading only, without making or changing any file (see readonly.go): reads
// work, [DB.ReadOnly] says why, and every write returns that
// [*ReadOnlyError], which matches sessiontree.ErrReadOnly. One that would
// need a migration, or is an empty file, cannot be opened so: Open
// returns the same error.
//
// Any number of processes may open, and create, one file at once. A
// migration waits for the write lock as long as ctx allows, not only
// [Options.BusyTimeout]: another process's migration of a large database
// holds it for longer.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	abs, err := realPath(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ro, current, err := prepareFile(abs)
	if err != nil {
		var nr *sessiontree.NotRegularFileError
		if errors.As(err, &nr) {
			return nil, err // it names the path already
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	drv, err := newDriver()
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := &DB{path: abs, opts: opts, drv: drv, ro: ro, current: current}
	if ro != nil {
		db.rmode = readModeOf(abs)
	}
	if err := db.connect(ctx); err != nil {
		db.closePools()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// realPath returns path made absolute, with its symbolic links resolved
// when it leads to a file: SQLite resolves them too, and makes the -wal
// and -shm files beside the file a link leads to, so that is where the
// checks of what can be written (writeCheck) and the choice of how to read
// (readModeOf) look. A path that leads to no file yet is left as it is.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// prepareFile creates the file and its directories owner-only when they
// do not exist, and otherwise checks from the header, without opening it
// through SQLite, that the file is ours: opening it would already change a
// foreign file (the WAL pragma rewrites its header). It returns why
// SQLite could not write the database, nil when it can (see writeCheck),
// and whether the header says the schema is current (see headerCurrent).
func prepareFile(path string) (ro *ReadOnlyError, current bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("create directory: %w", err)
	}
	if err := checkSideFiles(path); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return nil, false, f.Close()
	}
	if !errors.Is(err, os.ErrExist) {
		return nil, false, fmt.Errorf("create: %w", err)
	}
	// Refused before anything reads it: a named pipe would block the
	// open (here and in SQLite), a directory or a device is no database.
	f, err = fsx.Open(path, os.O_RDONLY, "database file")
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	var hdr [100]byte
	n, err := io.ReadFull(f, hdr[:])
	if n == 0 && (err == io.EOF || err == nil) {
		// Empty: a file made and not initialized yet, by another Open or
		// by the user (touch, a shell's redirection), whose mode is taken
		// to be that of a file Open makes.
		if ro := writeCheck(path, fi); ro != nil {
			return nil, false, fmt.Errorf("an empty file, not a database yet: %w", ro)
		}
		if fi.Mode().Perm() != 0o600 {
			if err := os.Chmod(path, 0o600); err != nil {
				return nil, false, fmt.Errorf("make the empty file owner-only: %w", err)
			}
		}
		return nil, false, nil
	}
	if err != nil || !bytes.Equal(hdr[:16], []byte("SQLite format 3\x00")) {
		return nil, false, ErrNotDatabase
	}
	appID := int32(binary.BigEndian.Uint32(hdr[68:72]))
	schemaCookie := binary.BigEndian.Uint32(hdr[40:44])
	userVersion := int64(binary.BigEndian.Uint32(hdr[60:64]))
	switch {
	case appID != 0 && appID != ApplicationID:
		return nil, false, fmt.Errorf("application_id %#x: %w", appID, ErrForeign)
	case appID == 0 && schemaCookie != 0:
		return nil, false, fmt.Errorf("a SQLite database without application_id: %w", ErrForeign)
	case userVersion > latestVersion():
		return nil, false, fmt.Errorf("schema version %d, this program knows up to %d: %w", userVersion, latestVersion(), ErrNewer)
	}
	return writeCheck(path, fi), headerCurrent(hdr[:]), nil
}

// checkSideFiles refuses, with a [*sessiontree.NotRegularFileError], a
// -wal or -shm file beside the database at path that is not a regular
// file: on a folder or a device SQLite fails with an I/O error that names
// neither, and on a named pipe as the -wal file it commits into the pipe,
// where a crash loses what it holds.
func checkSideFiles(path string) error {
	for _, suffix := range []string{"-wal", "-shm"} {
		side := path + suffix
		if fi, err := os.Stat(side); err == nil {
			if err := fsx.Check(side, fi, "database's "+suffix+" file"); err != nil {
				return err
			}
		}
	}
	return nil
}

// headerCurrent tells from a database header already found to be SQLite's
// whether the file is ours, in WAL mode and at the latest schema version.
// A header read from the file can be stale while the -wal file holds
// commits not yet copied back, but only ever older: application_id and
// user_version change in the migrations' commits alone, and only upwards.
// So a current header cannot be wrong about the schema being current,
// except when migration records were removed or added by hand, which
// fastOpen's check of the records catches.
func headerCurrent(hdr []byte) bool {
	const walVersion = 2 // file format bytes 18 and 19 in WAL mode
	return int32(binary.BigEndian.Uint32(hdr[68:72])) == ApplicationID &&
		hdr[18] == walVersion && hdr[19] == walVersion &&
		int64(binary.BigEndian.Uint32(hdr[60:64])) == latestVersion()
}

// migrations are the engine's migrations with their checksums
// (migrate.Load: the files read and hashed, about 0.15 ms once per
// process), listed once: the header's check takes the latest version,
// fastOpen the checksums.
var migrations = sync.OnceValue(func() []migrate.Migration {
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		return nil // Up reports the error
	}
	return migs
})

func latestVersion() int64 { return migrate.Latest(migrations()) }

// dsn builds the connection string: every pooled connection gets the
// pragmas, since they are per connection.
func (db *DB) dsn(write bool) string {
	u := url.URL{Scheme: "file", Path: db.path}
	q := url.Values{}
	switch db.rmode { // see readonly.go
	case readShared:
		q.Set("mode", "ro")
	case readLockless:
		q.Set("mode", "ro")
		q.Set("vfs", locklessVFS)
		// Before any pragma that reads the schema: reading in another
		// locking mode would need the -shm file.
		q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	case readImmutable:
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(db.opts.BusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	// With recursive triggers, the delete that INSERT OR REPLACE does
	// fires the append-only trigger too.
	q.Add("_pragma", "recursive_triggers(1)")
	q.Add("_pragma", "synchronous("+db.opts.Synchronous.pragma()+")")
	if db.rmode != readLockless {
		// modernc runs the _pragma values in the order of their text
		// (busy_timeout first), so cache_size, which reads the schema,
		// would run before locking_mode: a lockless connection keeps
		// SQLite's default page cache.
		q.Add("_pragma", "cache_size(-"+strconv.Itoa(db.opts.cacheKiB(write))+")")
	}
	if write && db.opts.MaxSize > 0 {
		q.Add("_pragma", "max_page_count("+strconv.FormatInt(max(db.opts.MaxSize/pageSize, 1), 10)+")")
	}
	if write {
		// A large transaction (a batch import) still keeps up to 16 MiB
		// of changed pages in memory before it writes any to the log, as
		// with the larger cache: spilling them early would write pages
		// it changes again.
		q.Add("_pragma", "cache_spill(-"+strconv.Itoa(readCacheKiB)+")")
	}
	q.Add("_pragma", "temp_store(MEMORY)")
	if write {
		if walVFSEnabled {
			q.Set("vfs", walVFSName) // registered at the first write connection
		}
		q.Add("_pragma", "journal_mode(WAL)")
		// The engine checkpoints in the background (see checkpoint.go).
		q.Add("_pragma", "wal_autocheckpoint(0)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
		if db.opts.MmapSize > 0 {
			q.Add("_pragma", "mmap_size("+strconv.FormatInt(db.opts.MmapSize, 10)+")")
		}
	}
	return u.String() + "?" + q.Encode()
}

// open makes a pool whose connections are conns (see conn.go).
func (db *DB) open(write bool) (*sqlx.DB, error) {
	c := newConnector(db.drv, db.dsn(write))
	c.walVFS = write && walVFSEnabled
	if write {
		db.wc = c
	} else {
		db.rc = c
	}
	return sqlx.NewDb(sql.OpenDB(c), "sqlite"), nil
}

func (db *DB) connect(ctx context.Context) error {
	if db.ro != nil {
		return db.connectReadOnly(ctx)
	}
	w, err := db.open(true)
	if err != nil {
		return err
	}
	db.w = w
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	r, err := db.openReaders()
	if err != nil {
		return err
	}
	if db.fastOpen(ctx) {
		return nil
	}
	// Connecting runs the pragmas, and switching a new file to WAL takes
	// an exclusive lock: processes creating the file together find it
	// busy, and SQLite says so at once, without its busy handler.
	if err := db.retry(ctx, func() error { return w.PingContext(ctx) }); err != nil {
		return err
	}
	if err := db.checkOwner(ctx, w); err != nil {
		return err
	}
	if _, err := migrate.Up(ctx, w, migrate.Files, migrate.Options{ApplicationID: ApplicationID, Now: db.opts.Now}); err != nil {
		// A step failing on a full disk is a full disk, as any write's.
		return fmt.Errorf("migrate: %w", db.translate(err))
	}
	return translate(r.PingContext(ctx))
}

// fastOpen is the open of a database whose schema is current, the common
// case, which runs one statement on a read connection: the header told
// that the file is ours, in WAL mode and at the latest version
// (headerCurrent), and migrate.Current confirms it from the records,
// each the embedded migration of its version by its checksum. The
// write connection is not opened then (database/sql connects it at the
// first write, which runs its pragmas), nor the checkpointer (at the first
// commit): a read command opens one connection. When the header or the
// records say otherwise, or the statement fails, Open takes the full path,
// which reports what is wrong: a record of another checksum (the record
// edited, or the migration of its number applied by another build) is
// migrate.ErrChecksum naming the migration.
func (db *DB) fastOpen(ctx context.Context) bool {
	if !db.current {
		return false
	}
	ok, err := migrate.Current(ctx, db.r, migrations())
	return err == nil && ok
}

// openReaders makes the pool of query-only readers, MaxReaders
// connections kept open.
func (db *DB) openReaders() (*sqlx.DB, error) {
	r, err := db.open(false)
	if err != nil {
		return nil, err
	}
	db.r = r
	r.SetMaxOpenConns(db.opts.MaxReaders)
	r.SetMaxIdleConns(db.opts.MaxReaders)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	return r, nil
}

// checkOwner refuses a database of another application. The header
// check in prepareFile can be stale for a database in WAL mode; this asks
// SQLite, in one statement, which reads one snapshot: read in two,
// another process's first migration (its tables and the application id
// in one commit) could land between them, and its tables seen without
// the id read before would look like a foreign file.
func (db *DB) checkOwner(ctx context.Context, p *sqlx.DB) error {
	var own struct {
		AppID   int32 `db:"app_id"`
		Objects int   `db:"objects"`
	}
	err := db.retry(ctx, func() error {
		return p.GetContext(ctx, &own, `SELECT (SELECT application_id FROM pragma_application_id) AS app_id,
       (SELECT count(*) FROM sqlite_master) AS objects`)
	})
	if err != nil {
		return err
	}
	if own.AppID == 0 && own.Objects != 0 {
		return fmt.Errorf("a SQLite database without application_id: %w", ErrForeign)
	}
	return nil
}

// connectReadOnly opens the readers of a database that cannot be
// written, after the checks of connect, made without writing: the file is
// ours and has the schema this program knows (a migration would write).
func (db *DB) connectReadOnly(ctx context.Context) error {
	r, err := db.openReaders()
	if err != nil {
		return err
	}
	if err := db.retry(ctx, func() error { return r.PingContext(ctx) }); err != nil {
		return err
	}
	if db.fastOpen(ctx) {
		return nil
	}
	if err := db.checkOwner(ctx, r); err != nil {
		return err
	}
	pending, err := migrate.Pending(ctx, r, migrate.Files, migrate.Options{ApplicationID: ApplicationID})
	if err != nil {
		return fmt.Errorf("migrate: %w", translate(err))
	}
	if len(pending) > 0 {
		return fmt.Errorf("the schema needs %d migrations, up to %s, which cannot be written: %w",
			len(pending), pending[len(pending)-1].Name, db.ro)
	}
	return nil
}

// Path returns the database file's absolute path, its symbolic links
// resolved.
func (db *DB) Path() string { return db.path }

// Close closes the database. [Storage] values opened from it fail with
// sessiontree.ErrClosed afterwards.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	return db.closePools()
}

func (db *DB) closePools() error {
	db.stopCheckpointer()
	var errs []error
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close %s: %w", db.path, err)
	}
	return nil
}

// QueryPragma reads a PRAGMA of the database on a read connection into
// dest, for diagnostics (the CLI's info command, tests).
func (db *DB) QueryPragma(ctx context.Context, name string, dest any) error {
	for _, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z') {
			return fmt.Errorf("pragma %q: not a pragma name", name)
		}
	}
	if db.closed.Load() {
		return sessiontree.ErrClosed
	}
	if err := db.r.GetContext(ctx, dest, "PRAGMA "+name); err != nil {
		return fmt.Errorf("pragma %s: %w", name, translate(err))
	}
	return nil
}
