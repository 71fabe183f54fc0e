package migrate

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/internal/sqltx"
)

//go:embed migrations/*.sql postgres/*.sql
var embedded embed.FS

// Files holds the SQLite engine's migrations, NNNN_description.sql at its
// root.
var Files fs.FS = mustSub(embedded, "migrations")

// PostgresFiles holds the PostgreSQL engine's migrations (package
// pgengine), applied with [Options.Dialect] set to [Postgres].
var PostgresFiles fs.FS = mustSub(embedded, "postgres")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // dir is a constant that exists in the embedded tree
	}
	return sub
}

// Errors returned by [Load] and [Up]; they are wrapped with context.
var (
	// ErrInvalid is returned for a migration file set that breaks the
	// naming rules: a name without a positive numeric prefix, or two files
	// with the same version.
	ErrInvalid = errors.New("invalid migrations")
	// ErrChecksum is returned when an applied migration's recorded
	// checksum differs from its file: the file was edited after it ran.
	ErrChecksum = errors.New("migration checksum mismatch")
	// ErrNewer is returned when the database records a version this code
	// does not have: it was written by a newer program.
	ErrNewer = errors.New("database schema is newer than this program")
	// ErrForeign is returned when the database's application_id is set
	// and is not [Options.ApplicationID]: the file belongs to another
	// program.
	ErrForeign = errors.New("database belongs to another application")
)

// Table is the name of the table recording applied migrations.
const Table = "schema_migrations"

// Migration is one numbered schema change.
type Migration struct {
	// Version is the file name's numeric prefix.
	Version int64
	// Name is the file name, e.g. "0001_init.sql".
	Name string
	// SQL is the file's text; it may hold several statements.
	SQL string
	// Checksum is the hex SHA-256 of SQL.
	Checksum string
}

// Load reads the migrations at the root of fsys (files ending in .sql),
// ordered by version.
func Load(fsys fs.FS) ([]Migration, error) {
	out, err := Names(fsys)
	if err != nil {
		return nil, err
	}
	for i, m := range out {
		b, err := fs.ReadFile(fsys, m.Name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", m.Name, err)
		}
		sum := sha256.Sum256(b)
		out[i].SQL, out[i].Checksum = string(b), hex.EncodeToString(sum[:])
	}
	return out, nil
}

// Names lists the migrations at the root of fsys as [Load] does, ordered
// by version, with their Version and Name only, from the file names
// without reading the files: enough for [Latest].
func Names(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	for _, name := range names {
		prefix, _, ok := strings.Cut(name, "_")
		v, err := strconv.ParseInt(prefix, 10, 64)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: want NNNN_description.sql with a positive number: %w", name, ErrInvalid)
		}
		out = append(out, Migration{Version: v, Name: path.Base(name)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return int(a.Version - b.Version) })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share version %d: %w", out[i-1].Name, out[i].Name, out[i].Version, ErrInvalid)
		}
	}
	return out, nil
}

// Latest returns the highest version in migs, 0 when there are none.
func Latest(migs []Migration) int64 {
	if len(migs) == 0 {
		return 0
	}
	return migs[len(migs)-1].Version
}

// Dialect is the SQL dialect of a database: one folder of migrations
// each. The zero value is [SQLite].
type Dialect int

const (
	// SQLite applies migrations in BEGIN IMMEDIATE transactions and
	// mirrors the version in PRAGMA user_version.
	SQLite Dialect = iota
	// Postgres serializes migrating processes with a transaction-level
	// advisory lock taken first in each step's transaction.
	Postgres
)

// SchemaSetting is the setting of a PostgreSQL session that tells the
// schema fence (migration 20 of [PostgresFiles]) the latest migration the
// program writing knows: a statement writing sessions rows is refused
// unless it is at least the fence's version. pgengine sends it with every
// connection; [Up] sets it to each step's version for the step's
// transaction.
const SchemaSetting = "sessiontree.schema"

// AdvisoryLockKey is the pg_advisory_xact_lock key [Up] takes on
// PostgreSQL: "stre" (0x73747265), the SQLite files' application_id.
// What an engine does once after the migrations, in several
// transactions, takes it too, to run after them and one process at a
// time.
const AdvisoryLockKey = 0x73747265

// LockPostgres takes the migrations' advisory lock (AdvisoryLockKey) in
// tx, a PostgreSQL transaction, until it ends, waiting for another
// process that holds it as long as ctx allows. It tries the lock
// (pg_try_advisory_xact_lock) and pauses between tries, up to 200 ms,
// rather than waiting in the server, where a bound the server sets on a
// statement's wait (lock_timeout, statement_timeout: a role's or a
// database's settings) ended the wait: every process opening the database
// while another migrated it failed, where a SQLite step waits past its
// busy timeout (step). It also lifts statement_timeout for the rest of
// tx: what runs under the lock (a migration, work left to Go after the
// migrations) runs once and as long as it needs; under a bound shorter
// than a large database's migration, no process could ever migrate it.
// lock_timeout stays: a step's DDL queued for a table lock behind a long
// transaction holds up every other statement on the table, which a
// DBA's lock_timeout is there to end.
func LockPostgres(ctx context.Context, tx sqlx.QueryerContext) error {
	var pause time.Duration
	for {
		var got struct {
			Lifted string `db:"lifted"`
			Got    bool   `db:"got"`
		}
		err := sqlx.GetContext(ctx, tx, &got, `SELECT set_config('statement_timeout', '0', true) AS lifted,
			pg_try_advisory_xact_lock($1) AS got`, AdvisoryLockKey)
		if err != nil || got.Got {
			return err
		}
		pause = min(max(2*pause, 5*time.Millisecond), 200*time.Millisecond)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// tableExists is the query telling whether the records table exists.
func (d Dialect) tableExists() string {
	if d == Postgres {
		return `SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = $1`
	}
	return `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
}

// bind turns a query written with ? placeholders into the dialect's.
func (d Dialect) bind(q string) string {
	if d == Postgres {
		return sqlx.Rebind(sqlx.DOLLAR, q)
	}
	return q
}

// Options configure [Up]. The zero value works.
type Options struct {
	// Dialect is the database's SQL dialect; the zero value is SQLite.
	Dialect Dialect
	// ApplicationID, when not zero, is written to PRAGMA application_id
	// with the first migration, and a database carrying another non-zero
	// id is refused with [ErrForeign]. SQLite only: it is ignored on
	// PostgreSQL, whose databases are not files that can be mistaken.
	ApplicationID int32
	// Now stamps the records; nil means time.Now.
	Now func() time.Time
}

// Result says what [Up] did.
type Result struct {
	// From is the version found before, To the version after.
	From, To int64
	// Applied lists the versions this call applied (others may have been
	// applied concurrently by another process).
	Applied []int64
}

type record struct {
	Version  int64  `db:"version"`
	Name     string `db:"name"`
	Checksum string `db:"checksum"`
}

// Up applies the pending migrations of fsys to db, each with its record in
// one transaction, and checks the applied ones against their files. db's
// transactions must begin IMMEDIATE (see the package doc).
func Up(ctx context.Context, db *sqlx.DB, fsys fs.FS, opts Options) (Result, error) {
	migs, err := Load(fsys)
	if err != nil {
		return Result{}, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Dialect == Postgres {
		opts.ApplicationID = 0
	}
	// Fast path, without the write lock: everything applied and intact.
	recs, err := readRecordsRetrying(ctx, db, opts.Dialect)
	if err != nil {
		return Result{}, err
	}
	from, err := verify(recs, migs)
	if err != nil {
		return Result{}, err
	}
	res := Result{From: from, To: from}
	if from == Latest(migs) && len(recs) == len(migs) {
		if err := checkAppID(ctx, db, opts.ApplicationID); err != nil {
			return res, err
		}
		return res, nil
	}
	for _, m := range unrecorded(recs, migs) {
		applied, version, err := step(ctx, db, m, migs, opts)
		if err != nil {
			return res, err
		}
		if applied {
			res.Applied = append(res.Applied, m.Version)
		}
		res.To = max(res.To, version)
	}
	return res, nil
}

// unrecorded returns the migrations of migs that recs does not record, in
// order: those [Up] steps through and [Pending] lists. A step re-reads the
// records under the write lock, so one applied meanwhile by another
// process is skipped there; one recorded already needs no step, whose
// transaction would write (the records table created if missing) where
// nothing is to be written, and whose failure on a database that cannot
// be written would name a migration applied long ago.
func unrecorded(recs []record, migs []Migration) []Migration {
	var out []Migration
	for _, m := range migs {
		if !slices.ContainsFunc(recs, func(r record) bool { return r.Version == m.Version }) {
			out = append(out, m)
		}
	}
	return out
}

// Pending returns the migrations of fsys that q's database has not
// applied, in order, after checking without writing what [Up] checks: the
// applied ones against their files ([ErrChecksum], [ErrNewer]) and the
// application id ([ErrForeign]). It is for a database that cannot be
// written, where Up could not apply them.
func Pending(ctx context.Context, q sqlx.QueryerContext, fsys fs.FS, opts Options) ([]Migration, error) {
	migs, err := Load(fsys)
	if err != nil {
		return nil, err
	}
	if opts.Dialect == Postgres {
		opts.ApplicationID = 0
	}
	recs, err := readRecordsRetrying(ctx, q, opts.Dialect)
	if err != nil {
		return nil, err
	}
	if _, err := verify(recs, migs); err != nil {
		return nil, err
	}
	if err := checkAppID(ctx, q, opts.ApplicationID); err != nil {
		return nil, err
	}
	return unrecorded(recs, migs), nil
}

// Current reports whether q's SQLite database has applied exactly migs
// (as [Load] returns them): the same versions, each recorded with the
// checksum of its file, judged in one statement returning one row, the
// records' versions and checksums joined in order. It is the fast path
// of a database opened often and migrated rarely: false (a migration
// pending, a record of another text, one this program does not know)
// sends the caller to [Up] or [Pending], which say what is wrong. It does
// not check the application id, and a database without the records
// table is an error (take Up's path then).
func Current(ctx context.Context, q sqlx.QueryerContext, migs []Migration) (bool, error) {
	var got string
	if err := sqlx.GetContext(ctx, q, &got, `SELECT coalesce(group_concat(version || ' ' || checksum, ' ' ORDER BY version), '') FROM `+Table); err != nil {
		return false, fmt.Errorf("read migration records: %w", err)
	}
	return got == recordsText(migs), nil
}

// recordsText is what [Current]'s statement answers for a database that
// has applied exactly migs.
func recordsText(migs []Migration) string {
	var b strings.Builder
	for i, m := range migs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(m.Version, 10) + " " + m.Checksum)
	}
	return b.String()
}

// Version returns the highest applied version of a SQLite database, 0 for
// one without migration records.
func Version(ctx context.Context, q sqlx.QueryerContext) (int64, error) {
	return SQLite.Version(ctx, q)
}

// Version returns the highest applied version of a database of dialect d,
// 0 for one without migration records.
func (d Dialect) Version(ctx context.Context, q sqlx.QueryerContext) (int64, error) {
	recs, err := readRecords(ctx, q, d)
	if err != nil {
		return 0, err
	}
	var v int64
	for _, r := range recs {
		v = max(v, r.Version)
	}
	return v, nil
}

// readRecordsRetrying reads the records outside a transaction. While
// another process sets up a fresh file (switching it to WAL takes an
// exclusive lock), SQLite can answer busy at once, without its busy handler;
// the read is retried for a bounded time.
func readRecordsRetrying(ctx context.Context, q sqlx.QueryerContext, d Dialect) ([]record, error) {
	const attempts, pause = 100, 20 * time.Millisecond
	for i := 1; ; i++ {
		recs, err := readRecords(ctx, q, d)
		if err == nil || i == attempts || !isBusy(err) {
			return recs, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// isBusy reports whether err is SQLite's busy or locked condition.
func isBusy(err error) bool {
	code := sqliteCode(err)
	return code == 5 || code == 6 // SQLITE_BUSY, SQLITE_LOCKED
}

// lockBusy reports whether err is SQLite's busy condition alone, the
// write lock held by another connection past the busy timeout: not
// SQLITE_LOCKED, which a step's own statements can meet every time.
func lockBusy(err error) bool { return sqliteCode(err) == 5 }

// sqliteCode is the primary result code of a SQLite error, 0 for others.
func sqliteCode(err error) int {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code() & 0xff
	}
	return 0
}

func readRecords(ctx context.Context, q sqlx.QueryerContext, d Dialect) ([]record, error) {
	var n int
	err := sqlx.GetContext(ctx, q, &n, d.tableExists(), Table)
	if err != nil {
		return nil, fmt.Errorf("read migration records: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	var recs []record
	if err := sqlx.SelectContext(ctx, q, &recs, `SELECT version, name, checksum FROM `+Table+` ORDER BY version`); err != nil {
		return nil, fmt.Errorf("read migration records: %w", err)
	}
	return recs, nil
}

// verify checks the records against the files and returns the highest
// applied version.
func verify(recs []record, migs []Migration) (int64, error) {
	byVersion := make(map[int64]Migration, len(migs))
	for _, m := range migs {
		byVersion[m.Version] = m
	}
	var v int64
	for _, r := range recs {
		m, ok := byVersion[r.Version]
		if !ok {
			return 0, fmt.Errorf("database has migration %d (%s), this program knows up to %d: %w", r.Version, r.Name, Latest(migs), ErrNewer)
		}
		if m.Checksum != r.Checksum {
			return 0, fmt.Errorf("migration %s is not the text the database applied (changed after it shipped, or applied by another build): %w", m.Name, ErrChecksum)
		}
		v = max(v, r.Version)
	}
	return v, nil
}

func checkAppID(ctx context.Context, q sqlx.QueryerContext, want int32) error {
	if want == 0 {
		return nil
	}
	var got int32
	if err := sqlx.GetContext(ctx, q, &got, `PRAGMA application_id`); err != nil {
		return fmt.Errorf("read application_id: %w", err)
	}
	if got != 0 && got != want {
		return fmt.Errorf("application_id is %#x, want %#x: %w", got, want, ErrForeign)
	}
	return nil
}

// stepTxOptions are the options of a step's transaction. On PostgreSQL
// it is READ COMMITTED whatever the server's default_transaction_isolation:
// the records are read again after the advisory lock (stepTx), and only
// a statement's own snapshot, taken once the lock is granted, sees the
// steps another process applied while this one waited; a transaction
// snapshot (REPEATABLE READ, SERIALIZABLE) is taken by the lock's
// statement, before the wait.
func (d Dialect) stepTxOptions() *sql.TxOptions {
	if d == Postgres {
		return &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	return nil
}

// step applies m unless it is recorded, re-reading the records under the
// write lock. It returns whether it applied m and the version after. On
// SQLite a step that finds the write lock taken for longer than the
// connection's busy timeout is tried again until ctx is done: the lock's
// holder is most likely another process applying a migration, which on
// a large database takes longer than any busy timeout, and waiting for
// it is what PostgreSQL's advisory lock does. On PostgreSQL a step that
// failed as a deadlock or a serialization failure (another session's
// locks: the advisory lock serializes migrating processes only) is tried
// again, up to pgStepAttempts times. Either way the step rolled back
// whole, so trying it again is safe.
func step(ctx context.Context, db *sqlx.DB, m Migration, migs []Migration, opts Options) (applied bool, version int64, err error) {
	pause := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		applied, version, err = stepOnce(ctx, db, m, migs, opts)
		if !tryAgain(opts.Dialect, err, attempt) {
			return applied, version, err
		}
		waiting := "waiting for the write lock"
		if opts.Dialect == Postgres {
			waiting = "waiting to try again after a deadlock or serialization failure"
		}
		select {
		case <-ctx.Done():
			return false, 0, fmt.Errorf("migration %s: %s: %w", m.Name, waiting, ctx.Err())
		case <-time.After(pause):
		}
		if opts.Dialect == Postgres {
			pause *= 2 // let the other sessions go first
		}
	}
}

// pgStepAttempts bounds the attempts of a PostgreSQL step that keeps
// meeting deadlocks or serialization failures.
const pgStepAttempts = 5

// tryAgain reports whether a step of dialect d that failed with err on
// its attempt-th try is to be tried again (step).
func tryAgain(d Dialect, err error, attempt int) bool {
	if d == SQLite {
		return lockBusy(err)
	}
	var coded interface{ SQLState() string }
	if attempt >= pgStepAttempts || !errors.As(err, &coded) {
		return false
	}
	code := coded.SQLState()
	return code == "40P01" || code == "40001" // deadlock_detected, serialization_failure
}

// stepOnce is one attempt of step.
func stepOnce(ctx context.Context, db *sqlx.DB, m Migration, migs []Migration, opts Options) (applied bool, version int64, err error) {
	var stepErr error
	err = sqltx.Run(ctx, db, opts.Dialect.stepTxOptions(), func(tx *sqlx.Tx) error {
		applied, version, stepErr = stepTx(ctx, tx, m, migs, opts)
		return stepErr
	})
	if err != nil && err != stepErr { //nolint:errorlint // the very value stepTx returned
		return false, 0, fmt.Errorf("migration %s: %w", m.Name, err) // begin or commit failed
	}
	return applied, version, err
}

// stepTx is step's transaction.
func stepTx(ctx context.Context, tx *sqlx.Tx, m Migration, migs []Migration, opts Options) (applied bool, version int64, err error) {
	if opts.Dialect == Postgres {
		// Processes migrating at once queue here; the records are read
		// again below, after the lock.
		if err := LockPostgres(ctx, tx); err != nil {
			return false, 0, fmt.Errorf("migration %s: lock: %w", m.Name, err)
		}
	}
	if err := checkAppID(ctx, tx, opts.ApplicationID); err != nil {
		return false, 0, err
	}
	recs, err := readRecords(ctx, tx, opts.Dialect)
	if err != nil {
		return false, 0, err
	}
	if len(recs) == 0 {
		// Created only where it may be missing: a database that cannot
		// be written then fails on the migration's own statements.
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+Table+` (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    checksum   TEXT NOT NULL,
    applied_at TEXT NOT NULL
)`); err != nil {
			return false, 0, fmt.Errorf("migration %s: create %s: %w", m.Name, Table, err)
		}
	}
	if version, err = verify(recs, migs); err != nil {
		return false, 0, err
	}
	if slices.ContainsFunc(recs, func(r record) bool { return r.Version == m.Version }) {
		return false, version, nil
	}
	if opts.Dialect == Postgres {
		// The step knows its own schema: the fence lets its writes of
		// sessions rows through, whatever connection runs it.
		if _, err := tx.ExecContext(ctx, `SELECT set_config('`+SchemaSetting+`', $1, true)`, strconv.FormatInt(m.Version, 10)); err != nil {
			return false, 0, fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return false, 0, fmt.Errorf("migration %s: %w", m.Name, err)
	}
	now := opts.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	if _, err := tx.ExecContext(ctx, opts.Dialect.bind(`INSERT INTO `+Table+` (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)`),
		m.Version, m.Name, m.Checksum, now); err != nil {
		return false, 0, fmt.Errorf("migration %s: record: %w", m.Name, err)
	}
	version = max(version, m.Version)
	if opts.Dialect == SQLite {
		// user_version mirrors the highest version so a reader can tell it
		// from the file header without reading a table; both are rolled
		// back together with the step.
		if _, err := tx.ExecContext(ctx, `PRAGMA user_version = `+strconv.FormatInt(version, 10)); err != nil {
			return false, 0, fmt.Errorf("migration %s: set user_version: %w", m.Name, err)
		}
	}
	if opts.ApplicationID != 0 {
		if _, err := tx.ExecContext(ctx, `PRAGMA application_id = `+strconv.FormatInt(int64(opts.ApplicationID), 10)); err != nil {
			return false, 0, fmt.Errorf("migration %s: set application_id: %w", m.Name, err)
		}
	}
	return true, version, nil
}
