// Package pgengine stores sessions in PostgreSQL: the SQLite engine's
// model and guarantees (package engine) on a server that agents on many
// machines share.
//
// # Schema
//
// The engine owns every table of migrate/postgres and every statement on
// them (applied by [Open] through package migrate, refusing a schema
// newer than this code knows): one sessions row per session with its leaf
// and counters, an append-only entries table holding each entry's JSON
// byte for byte (text, not jsonb), the materialized active branch, the
// current labels, usage_days, claims, the store's imports records, the
// search index (search_text) and the follows' watchers (the backends
// listening for a session's appends, migration 6), and derived_redo, the
// sessions whose derived values an older engine computed by rules since
// fixed, which Open computes again (migrations 14, 16, and 20 for what
// older processes wrote before the fence; [DB.Repair], the command
// line's check --repair, does the same for a session Check reports and
// no migration listed, and writes its leaf, branch, first user text and
// last change again as well, repair.go), and
// header_checksum_fill, the sessions stored before migration 18, or
// created since by an older engine (migration 19), whose header checksum
// Open computes. Triggers refuse to change or delete an entry
// outside a session delete, and (the schema fence, migration 20, moved
// to 21 by the tree's counts, fence.go) any write of sessions rows by a connection whose program is
// older than the schema: a process that connected before a newer one
// migrated the database, which would derive values by older rules. Its
// write fails whole (SQLSTATE ST003, migrate.ErrNewer from this engine
// once a later migration moves the fence). A [DB] is a
// sessiontree.Database, the contract package store runs on.
//
// # Rules
//
// The tree's rules live in the root package and are called from here, not
// written again: entries are built and checked by sessiontree.BuildEntry
// and Entry.Validate, the state at an entry follows State.Apply, stats
// follow sessiontree.Tally, labels and names LabelOf and NameOf. Each
// entry carries the checksum of its JSON (entries.checksum, migration 2),
// sessiontree.EntryChecksum as on SQLite, so that a session moved between
// the engines keeps the same sums: every write computes it, and Check and
// every read that hands out entries (the log, an entry, entries by type,
// paths, the state, RawEntries) verify it, so a row changed behind the
// engine's back is a sessiontree.CorruptError naming the entry. Each
// session row carries its header's checksum (sessions.header_checksum,
// migration 18, sessiontree.HeaderChecksum as on SQLite), written by the
// insert that creates it and verified by Check and by an export, which
// writes the file's first line from those columns (header.go). An entry's search text is sessiontree.SearchText's.
//
// # Cost
//
// No read loads a whole session: the leaf, name, stats and the summary
// info shows (the tree's branches, roots, compactions and labels, kept by
// the writes: shape.go, migration 21) are one sessions row; the active path is a range of the branch table; a path from an entry
// off it is a recursive query up to where it meets the branch; the state at
// an entry is at most three rows its pointers name.
//
// A session's delete leaves its search_text rows, and their entries in
// the trigram GIN index, as dead tuples, which the server's autovacuum
// removes: it counts dead tuples in the server, whichever process
// deleted, so nothing here merges or counts as the SQLite engine's FTS5
// index needs (engine/searchmerge.go). The index does not shrink, but
// its freed pages are used again: 30 cycles of 50 sessions of 20
// indexed entries made, then deleted one process per delete, kept it at
// 4.8 to 5.1 MB, the size of the first five cycles, with six autovacuums
// of search_text and none asked for.
//
// # Concurrency
//
// A [DB] and the [Storage] values it opens are safe for concurrent use,
// and by other processes and machines on the same database. Writes
// serialize per session: each write transaction locks its session's row
// (SELECT ... FOR UPDATE) and reads the leaf under the lock, so writers to
// one session queue and writers to different sessions run in parallel. A
// deadlock, a serialization failure or a connection lost before the commit
// is retried inside, a bounded number of times ([Options.Attempts]), then
// reported as [sessiontree.ErrConflict] or [sessiontree.ErrStorage]. A
// connection lost during the commit is not retried (the write may have
// happened): it is reported as [sessiontree.ErrCommitUnknown] with
// ErrStorage, and so is a write whose context ended while its COMMIT was
// on its way. A commit whose reply arrived
// is the write's success, whatever the connection or the server does
// next (commitBatch); a batch is not sent on a connection the server is
// already seen to have closed (a restart while it was idle), which is a
// lost connection before the commit. Reads that take several
// statements run in one REPEATABLE READ snapshot. An ordinary append is
// one round trip on pgx's own interface (pipe.go: BEGIN, the lock, the
// insert, the row's write-back and COMMIT in one batch), built from the
// row as its Storage's last such append committed it (rowcache.go), which
// the lock checks is still the session's (its xmin); when it is not, or
// none is kept, two (BEGIN with the lock, then the rest) and the row is
// read under the lock. Its update of the sessions row is a HOT one,
// touching no index (migration 7). Such appends of one DB to different
// sessions that meet share a transaction (group commit, group.go): one
// BEGIN, the rows locked, one insert of all their entries, one COMMIT and
// WAL flush, in one round trip when each Storage's kept row is still its
// session's (the lock checks it; else in two); a member that fails is run
// again alone, so it fails alone, and a lone writer never waits for a
// group. Groups of different processes (or DBs) commit apart; the
// server's commit_delay lets their commits share a WAL flush, and Open
// asks for it on its connections when the role may set it and nobody
// chose one (commitdelay.go). A group's leader waits for no row lock: an append whose
// session's row another transaction holds runs again alone after the
// group, so appends to other sessions never queue behind that row. The
// write transactions are READ COMMITTED whatever the server's
// default_transaction_isolation (Open sets it on its connections): they
// wait for the rows they lock. After a bulk load the tables are analyzed when the planner's
// statistics would mislead it (analyze.go).
//
// # Claims and follow
//
// [Storage.Claim] gives one writer a fenced, expiring claim on a session,
// with the SQLite engine's rules (sessiontree.Claimer): the claims table
// holds one row per session, every write checks it in its transaction
// under the session row's lock, and leases run on [Options.Now] (the
// clients' clocks, which should agree). [Storage.Watch] listens
// (LISTEN/NOTIFY) on a connection of its own for the notification a
// trigger sends when a commit adds entries to the session (only to a
// session that has a watch: the row's watched flag, migration 9), so
// sessiontree.Follow sees each entry as it is committed by any process on
// any machine; a lost connection is opened again and the log read, so
// nothing is missed.
package pgengine
