// Package migrate applies numbered SQL migrations to a SQLite or
// PostgreSQL database and holds each engine's own migrations.
//
// # Dialects
//
// One folder of migrations per dialect: migrations/ for SQLite ([Files],
// the engine package) and postgres/ for PostgreSQL ([PostgresFiles],
// package pgengine). [Options.Dialect] says which a database speaks; the
// rules (numbering, checksums, refusing a newer schema, one transaction
// per step) are the same for both.
//
// # Files
//
// A migration is a file NNNN_description.sql at the root of an [fs.FS]; its
// version is the numeric prefix (positive, unique). The engine's migrations
// are embedded in [Files]; tests pass an fstest.MapFS. A migration is SQL
// alone; what SQLite cannot compute it gets from SQL functions of the
// connection: migrations 11, 12, 13, 18, 20 to 27 call entry_checksum, the
// usage functions, entry_search_text, derived_text, entry_name,
// entry_label, entry_indexed_text, header_checksum and
// search_doc_size_is, and the triggers of migration 28 (the schema
// fence) sessiontree_upgrade_needed, which the engine
// defines on its connections
// (engine.RegisterFunctions), so [Files] applies through the engine or a
// connection given those functions.
//
// # Transactions
//
// Each pending migration runs with its version record in one
// BEGIN IMMEDIATE transaction (on PostgreSQL: a transaction that first
// takes an advisory lock, held until it ends: [LockPostgres]). The applied versions are read again after
// BEGIN, under the write lock, so two processes opening a fresh file at once
// cannot both apply a step: the second finds it recorded and skips it. A
// failing step rolls back whole: nothing of it, and no version record, is
// left behind. So [Up] may simply be called again after it failed, even
// when a step's COMMIT had an unknown outcome (a connection lost before
// its reply): a step that committed is found recorded and skipped
// (pgengine.Open does so when its connection is lost).
//
// # Checks
//
// Each applied migration is recorded with a SHA-256 checksum of its text.
// [Up] refuses a database whose recorded checksum differs from the file's
// ([ErrChecksum]: a migration was edited after it shipped) and one that
// records versions this code does not know ([ErrNewer]: written by a newer
// program). With [Options.ApplicationID] set it also sets PRAGMA
// application_id in the first step and refuses a database that carries
// another ([ErrForeign]). [Pending] makes the same checks without writing,
// for a database that cannot be written, and lists what Up would apply.
//
// # The schema fence
//
// [Up] refuses a newer schema when a program opens the database, but a
// process that opened it before a newer one migrated it keeps its
// connections. So a migration that changes a rule by which the engines
// derive values from entries (a session's counters, usage by day, names,
// labels, the search text, header sums) must also stop the engines that
// predate it from writing: it moves the schema fence to its own version,
// in the same step. On SQLite it creates again the triggers
// sessions_fence_insert, _update and _delete (migration 28) with its
// version as sessiontree_upgrade_needed's argument and in their message;
// on PostgreSQL the trigger sessions_schema_fence (migration 20) with its
// version as schema_fence's argument, which the engine compares with the
// setting sessiontree.schema its connections send. Every write of derived
// values writes its session's row, where the triggers are. Engines older
// than the fence fail their writes whole; the migration computes again
// (SQLite) or lists for Open to compute again (PostgreSQL's derived_redo)
// what they may have written by the older rule before it.
//
// # Concurrency
//
// [Up] is safe to call from several processes on one file at once. It takes
// a *sqlx.DB whose BeginTx starts BEGIN IMMEDIATE transactions (the DSN
// parameter _txlock=immediate of modernc.org/sqlite). A step that finds
// the write lock busy past the connection's busy timeout is tried again
// until the context is done, as a PostgreSQL step waits for the advisory
// lock: another process's step may take longer than any busy timeout. A
// PostgreSQL step that another session's locks deadlock (or that fails
// to serialize) is rolled back by the server and tried again, a bounded
// number of times.
package migrate
