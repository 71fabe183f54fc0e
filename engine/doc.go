// Package engine is the SQLite storage engine of sessiontree: many
// sessions in one database file, each an append-only tree of entries, with
// reads that never load a whole session.
//
// # Layout
//
// [Open] opens (or creates) a database file and applies the migrations of
// package migrate; schema.sql at the repository root is the schema they
// make, with its design explained. [DB.CreateSession] and
// [DB.OpenSession] give a [Storage], which implements
// sessiontree.Storage, sessiontree.StateReader,
// sessiontree.BatchAppender and sessiontree.HeadReader, so a
// sessiontree.Session runs on it. imports.go owns the imports table, the
// session store's records of the files it imported
// (sessiontree.ImportRecord), read and written in a [Tx] of
// [Database.View] or [Database.Update].
//
// [NewDatabase] gives the database through the engine-neutral contract
// sessiontree.Database, on which package store runs: the engine owns
// every table and every statement on it (sessions.go and sessionrows.go
// the sessions table, export.go an export's reads, warnings.go unknown
// types, searchindex.go the search index's catch-up, search.go the
// search primitives, indexcheck.go the index's check), and [*Tx] is its
// one transaction type, for reads ([Database.View]) and writes
// ([Database.Update]). Entry and session keys (session*2^32+seq) are
// the engine's own; callers only compare them.
//
// What each operation costs:
//
//   - opening a session, its leaf, name and metadata: one row;
//   - its stats (pi 1.6.0's /session totals and cost breakdown): that
//     row, kept by every write in its transaction by
//     sessiontree.StatsOf's rules;
//   - usage over every session, by day, week, model, cwd or session
//     ([DB.Usage]): the usage_days rows, per session, day and bucket,
//     that every write keeps in its transaction by the same rules;
//   - the active path and the context: a range scan of the materialized
//     branch, from the compaction boundary to the leaf;
//   - the path from an entry on the active branch: a prefix of the branch,
//     also a range scan; from any other entry, a recursive query over
//     parent ids that stops at the compaction boundary stored with the
//     entry, and with a corrupt-session error on a cycle, a missing
//     parent or depths that disagree with the parent ids;
//   - the state (thinking level, model, tools) at any entry: at most four
//     rows, since every entry points at the latest state-setting entries of
//     its full path;
//   - the shape of the whole tree (each entry's type, id, parent id and
//     timestamp, [Storage.LogHeads], to draw it): a range scan of the
//     session's entry rows that reads none of their JSON;
//   - an append: one entry row, one branch row and the session row;
//   - moving the leaf: the branch rows below the point where the old and
//     the new path meet.
//
// # Entries
//
// Every entry is stored as its JSON, byte for byte, with the columns the
// queries need read from it; a batch entry whose fields are not what its
// JSON holds is refused. With the JSON goes its checksum
// ([sessiontree.EntryChecksum], CRC-32C), written by every write path; [DB.Check]
// verifies every entry's, and every read that hands out entries (paths,
// the log, an entry, entries by type, the state) verifies those it reads,
// so a row changed behind the engine's back is a
// sessiontree.CorruptError naming the entry, not an entry. So does a
// session's header (its row's id, version, created_at, cwd and
// parent_session, from which an export writes the file's first line):
// its checksum ([sessiontree.HeaderChecksum], migration 25) is written by
// the insert that creates the session, and [DB.Check] and an export
// verify it. Entry types are open: an entry of a type the
// engine does not know is stored and read like any other, follows the
// append and leaf rules, and contributes nothing beyond being counted.
// Stats add costs one record at a time in log order, as pi does, so that
// the totals are pi's to the last bit (see schema.sql); [DB.Check]
// replays every session through sessiontree.Tally against them.
//
// # Concurrency
//
// A [DB] and its [Storage] values are safe for concurrent use. Each write
// is one BEGIN IMMEDIATE transaction on the DB's single write connection
// that reads the leaf inside the transaction, so writers in goroutines and
// in other processes serialize on SQLite's write lock: no entry is lost
// and none lands on a stale leaf. (The write connection remembers the
// leaf of each session it appended to, and reads it again only when
// SQLite's data version, checked inside the transaction, shows that
// another connection has written since.) A writer waits for another process's
// write up to [Options.BusyTimeout]; busy errors are retried within that
// bound and then reported as sessiontree.ErrLocked. [DB.TryUpdate] does
// not wait at all, and [DB.WaitForLock] waits as long as its context
// allows, for callers that choose (the store's import and search index).
// A write refused for want of room (a full disk, [Options.MaxSize])
// matches sessiontree.ErrDiskFull. Reads use a pool of
// query-only connections and, under WAL, never wait for writers; a read
// of several statements (a path) sees one snapshot.
//
// # Version skew
//
// [Open] refuses a database whose schema is newer than this engine
// ([ErrNewer]). A process that opened the database before a newer one
// migrated it keeps its connections, so from migration 28 on the schema
// carries a fence (fence.go): triggers on the sessions row, which every
// write of derived values writes, refuse the write and its transaction
// on the connection of an engine older than the schema. An engine from
// before migration 28 fails with "no such function:
// sessiontree_upgrade_needed"; this one, once a later migration that
// changes a rule of derived values moves the fence, with [ErrNewer].
// Nothing is stored of a refused write, reads go on (a search with
// entries to index first excepted), and a process opened again
// (upgraded) writes as before. What an older engine wrote before the
// fence by rules since changed (a process from before migration 19
// appending after it: the tree's counts; before 20 to 24: usage by day;
// before 22: names and labels) Check reports, and [DB.Repair] (the
// command line's check --repair) computes again from the session's
// entries, by the rules the writes use, leaving the entries and a
// session whose entries are damaged as they are (repair.go). Unlike
// PostgreSQL's migration 20, Open does not: the engine cannot tell
// which sessions an older engine wrote (a session's last change is its
// last entry's time, not the write's), and finding them would be a
// replay of every session.
//
// # Writer claims and watching
//
// [Storage.Claim] gives one writer a fenced, expiring claim on a session
// (sessiontree.Claimer; the claims table, claim.go). Every write checks
// the claim rule in its own transaction, one primary-key lookup: a write
// through a [Claim] must hold the session's current fence and renews its
// lease; any other write is refused while another holder's claim is live.
// [Storage.Watch] (sessiontree.Watcher, follow.go) polls SQLite's data
// version on a connection of its own, outside the pools, so that
// sessiontree.Follow sees commits of every process.
//
// # Speed
//
// Under WAL, every page a write changes is a frame of the log, and frames
// are most of an append's cost: an append writes one page of the entries
// table, one of its UNIQUE (session, id) index, one of the branch and one
// of the sessions table. The engine runs its statements on SQLite's
// driver connection directly, prepared once per connection (see
// conn.go), because database/sql's per-statement and per-row work costs
// as much as SQLite itself on these paths. The write connections hand a
// commit's frames to the kernel in one write instead of two per frame
// (walbuf.go). A DB checkpoints the log in a goroutine of its own rather
// than in the commit that fills it, and makes the log start over even
// while writers never pause and readers always hold a snapshot (see
// checkpoint.go). Moving the leaf walks up runs of consecutive entries
// rather than one entry at a time (see branch.go). See bench_test.go.
//
// # Search index maintenance
//
// The search index (entries_fts, FTS5 with the trigram tokenizer) is
// written by the catch-up (searchindex.go), one segment per chunk, and
// FTS5 merges its segments as they pile up (automerge 16, migration
// 17). A session's delete removes its indexed entries from the index as
// delete markers, which leave it, with the postings they cancel, only
// when a merge writes the oldest segment; so a delete that has removed,
// since the last such merge, as many indexed entries as the index holds
// (and 1,000 at least) merges every segment into one, writing at most
// 4,096 pages (searchmerge.go). Under churn the index then stays within
// a bound set by the rows it holds, not by the deletes: 100-525 KB and a
// file of 212 pages for 240 entries held, where it had grown to 4 MB
// and 1,130 pages by 2,000 cycles. The count is kept in the database
// (search_merge, migration 29), each delete adding to it in its own
// transaction, so the deletes of processes that each delete a little and
// exit (the command line's rm) count as one process's do. Appends,
// imports, the catch-up and searches do not merge.
//
// # Read-only databases
//
// A database SQLite could not write ([Open] checks the file, its folder
// and its -wal and -shm files first) is opened for reading only, without
// making or changing a file: on a read-only mount, in a folder or a file
// the user may not write. Reads work; every write returns a
// [*ReadOnlyError] (sessiontree.ErrReadOnly); [DB.ReadOnly] says why. How
// it is read depends on the files beside it, see readonly.go.
//
// # Caveats
//
// The entries table refuses UPDATE and DELETE by triggers, except a DELETE
// of entries whose session is marked deleting ([DB.DeleteSession]). The
// connections enable recursive_triggers so that INSERT OR REPLACE cannot
// sidestep them; a tool opening the file without that pragma could.
//
// The engine's connections come from a driver of its own, which gives
// them the SQL function entry_checksum(blob) (the [sessiontree.EntryChecksum] of a
// blob), those of usage.go, entry_search_text(type, raw) (the
// [SearchText] of an entry, searchtext.go) and entry_indexed_text(type,
// raw) (its [sessiontree.IndexedText]), derived_text(blob)
// ([sessiontree.DerivedText]) and entry_name(raw) and entry_label(raw)
// ([sessiontree.NameOf], [sessiontree.LabelOf], derivedfuncs.go) and
// header_checksum(id, version, created_at, cwd, parent_session) (the
// [sessiontree.HeaderChecksum] of a session's header) and
// search_doc_size_is(sz, body) (whether an index document's size is
// body's trigram count): migrations 11, 12, 18 and 20 to 27 fill or
// recompute older rows with them, the schema fence's triggers call
// sessiontree_upgrade_needed(n) (migration 28)
// and the search_text view calls entry_indexed_text (migration 23),
// so the engine's migrations must be applied through the engine (or
// a connection given those functions, [RegisterFunctions]), and a
// connection of another program cannot read that view, delete a
// session's entries (whose trigger reads it) or write a sessions row. A checksum guards against damage, not
// against a deliberate edit: whoever can write the file can write a
// matching checksum.
package engine
