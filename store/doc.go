// Package store is the session store: a database of many sessions on
// any engine that implements sessiontree.Database (the SQLite engine,
// package engine, through [Open]; another through [New]), and the bridge
// to pi's session files. It is what an application or the command line
// embeds.
//
// # What it owns
//
// The store's logic, written once above the contract: prefix resolution
// and list cursors, fork rules, export formatting, search query lexing,
// short-phrase expansion, ranking and snippets, the index catch-up's
// chunking and waiting, and pi file import. It holds no SQL: the engine
// owns every table and runs its own statements. Only target.go and
// store.go name the engines, to open one ([OpenURL], [Open],
// [OpenPostgres]); everything else goes through sessiontree.Database.
//
// # What it does
//
//   - [Store.Create], [Store.OpenSession] (by id or a unique id prefix),
//     [Store.Info], [Store.List] (newest first, by directory or name,
//     with cursor paging, from the sessions table alone) and
//     [Store.Delete] (atomic, repeatable) manage sessions. Create makes
//     an empty session, or one named in the same transaction
//     ([CreateOptions.Name]). A session is a
//     sessiontree.DatabaseSession: wrap it in sessiontree.NewSession for
//     the typed API.
//   - [Store.Fork] copies a path or a whole session into a new one in one
//     transaction, as pi's createBranchedSession does.
//   - [Store.Import] brings pi's JSONL files in (every version, through
//     the JSONL reader and the engine's batch append), idempotently: it
//     remembers each file and, when pi has appended to it since, imports
//     only the new lines; with [ImportOptions.FollowRewrites] it also
//     follows a file pi rewrote whole or that moved (package watch,
//     which keeps a store current while pi writes, sets it).
//     [Store.Export] and [Store.ExportFile] write a
//     session back as a pi file, optionally in the form the released pi
//     resumes correctly.
//   - [Store.Search] is full-text search over every session with FTS5,
//     for English and CJK text, over the first 1 MiB of each entry's text
//     ([IndexedTextLimit]); [Store.Index] brings the index up to date.
//   - [Store.Usage] reports the tokens and cost of every session (pi's
//     /session breakdown, summed) by day, week, model, directory or
//     session, from the totals the engine keeps per session and day.
//   - [Store.Check] verifies the database, for the command line's check;
//     [Store.Warnings] names the sessions holding entries of types this
//     version does not know, which are kept byte for byte (not damage).
//   - [ParseTarget] and [OpenURL] take what --db names: a SQLite file
//     path, a file:// URL or a postgres:// URL; OpenURL is the one place
//     that picks the engine.
//
// # Schema
//
// The store's tables come as migrations of package migrate (SQLite's
// 0003 and 0004 and the search index's later ones; PostgreSQL's 0002 and
// 0004), so any engine database gains them when opened; schema.sql at the
// repository root shows and explains SQLite's. Writes (a
// Storage's append, a batch import, a fork) store entries only; each
// session's row marks how many of its entries the search index holds, and
// [Store.Index] indexes the rest, many at a time (chunks bounded in
// entries and in bytes), advancing the mark in the same transaction.
// Indexing costs several times what storing does, so appends and imports
// no longer pay it one entry at a time. A search catches the index up
// when it can take the write lock at once, and reads the entries still
// pending itself, so it still sees every committed entry, within bounds
// ([Store.Search]).
//
// # Concurrency
//
// A [Store] is safe for concurrent use, also with other processes on the
// same database: every write is one transaction of the engine (on SQLite
// a BEGIN IMMEDIATE one, so writers queue on the file's write lock; on
// PostgreSQL writers queue on the rows of the sessions they write, see
// package pgengine), and reads see one snapshot and never wait for
// writers. An import holds the write lock one
// chunk of a file (or one group of small files) at a time; imports of the
// same files at once import each file once. An import reads the files
// ahead of its transactions in a goroutine of its own, which it ends
// before it returns. Reads stay reads: [Store.Search] and [Store.Check]
// never fail, nor wait, because another process is writing. The long
// writes, [Store.Import] and [Store.Index], wait for another process's
// write once, as long as their context allows, and say so
// ([ImportOptions.Waiting]), or give up at once with
// sessiontree.ErrLocked ([ImportOptions.NoWait]); never the busy timeout
// once per file or chunk. A write that finds no room matches
// sessiontree.ErrDiskFull.
//
// # Read-only databases
//
// A database that cannot be written (a read-only mount, a folder or file
// the user may not write) opens read-only (see engine.Open): listing,
// reading, exporting, [Store.Check] and [Store.Search] work (a search
// then answers from what the index holds and a scan of what is pending,
// without catching the index up), and every write returns an error
// matching sessiontree.ErrReadOnly.
//
// # Caveats
//
// A path fork rewrites the parentId of an entry whose parent was a label
// entry (which a path fork leaves out, as pi does), and a compaction's
// firstKeptEntryId that named one; nothing else of a copied entry
// changes. Export for pi may need forward references
// ([Store.Export]). Search parses its query (FTS5's query language,
// the same on every engine) unless told otherwise
// ([SearchOptions.Literal]).
package store
