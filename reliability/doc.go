// Package reliability proves, by tests, that sessiontree loses nothing
// it acknowledged and survives what agent users actually meet: crashes in
// the middle of a write, several processes on one session, damaged and
// hostile files, sessions too big to load, and strings made to break SQL
// (issue 8). The package has no code of its own: everything is in its
// tests, which drive the public packages (engine, jsonl, store) and the
// sessiontree command, in separate processes where that is the point.
//
// # Running
//
//	go test -race ./reliability            # what CI runs: every item, small
//	go test -race -short ./reliability     # a smoke run
//	go test ./reliability -reliability.full -timeout 30m -v
//	SESSIONTREE_RELIABILITY_FULL=1 go test ./reliability -timeout 30m -v
//
// The full run has the sizes of issue 8: 100 kill rounds per backend and
// mode, 8 writer processes of 400 appends, a session with 500 MB of
// payloads, a 50 MB line. Run it without -race (the race detector makes
// SQLite, C translated to Go, many times slower); it takes a few minutes.
// Under -race the sizes of data in the CI run are divided by 16. Every
// test logs what it did (see -v): rounds, kills, acknowledged writes,
// entries checked, inputs tried, memory.
//
// Most tests run in parallel (4 per CPU: they mostly wait for their child
// processes). A few run alone, before all of them, as go test runs a test
// that does not call t.Parallel: those that time their commands
// (TestReadsWhileWriting, TestHugeEntryInterrupted,
// TestImportWaitsForWriter, TestSpecialFiles), those that count the test
// process's allocations (TestHostileFiles, TestHostileDatabases,
// TestLongLines) and TestSymlinkedFolders, which sets the environment.
// Each of them holds every parallel test back: a test measuring only its
// child processes (TestHugeEntry, TestBoundedMemory) runs in parallel.
//
// Child processes are this test binary run again with
// -test.run=^TestChild$ and a job in the SESSIONTREE_RELIABILITY_CHILD
// environment variable. They talk to the test on stdout, one line per
// event, each written with a single write(2) of less than PIPE_BUF
// bytes, so a killed child never leaves half a line. The sessiontree
// command is built once per run, without the race detector.
//
// # Crash safety
//
// TestCrashSafety: a child process writes to a session in a loop
// (messages, a quarter of them tool results of up to hundreds of
// kilobytes, labels, names, moves of the leaf that start new branches,
// compactions) and prints each entry's id after the call that wrote it
// has returned: an acknowledged write. The test kills it with SIGKILL at
// a random moment: sometimes while it is still opening the session (the
// first engine rounds create the database, so kills land in the
// migrations), for JSONL half the time at the moment the file ends inside
// a line, that is in the middle of a write(2), which a random moment
// rarely hits. At least 20 rounds (100 in the full run) for each of: the
// SQLite engine with synchronous=NORMAL and with FULL, the JSONL backend
// without and with Options.Sync. After every kill:
//
//   - engine: PRAGMA integrity_check is "ok", and the store's Check
//     passes: the engine's replay of each session's log against its
//     materialized branch, counters, labels and leaf, and the search
//     index;
//   - JSONL: opening for writing recovers a torn last line (its bytes
//     kept in a sidecar file, checked byte for byte, then cut), the next
//     append lands on a clean line (the file ends in exactly newline,
//     entry, newline), and the whole file then reads in Strict mode and
//     passes the tree checks of `sessiontree check`;
//   - every acknowledged write is present, and at most one entry per kill
//     is present unacknowledged: the write in flight, which may or may not
//     have made it; both are correct.
//
// At the end `sessiontree check` runs on the database or the last file.
//
// # What is guaranteed, precisely
//
// The tests kill processes; they cannot cut the power. For each mode,
// the first sentence is tested, the rest is what the design gives:
//
//   - Engine, synchronous=FULL: an acknowledged write survives a crash of
//     the process. The WAL is fsynced at every commit, so it also
//     survives an operating-system crash or a power loss.
//   - Engine, synchronous=NORMAL (the default) in WAL mode: an
//     acknowledged write survives a crash of the process: the commit is
//     in the WAL file, in the operating system's page cache, when the call
//     returns. On power loss or an operating-system crash the last
//     transactions committed since the WAL was last synced (at a
//     checkpoint) may roll back; the database is never corrupted, so what
//     remains is the consistent state of an earlier commit.
//   - JSONL with Options.Sync: the line is fsynced before the append
//     returns; it survives a process crash and a power loss.
//   - JSONL without Sync (the default, as in pi): acknowledged means the
//     whole line has been handed to the operating system with one
//     write(2), and is in the page cache: it survives a kill of the
//     process. A power loss or kernel crash may lose the unsynced tail of
//     the file, or leave a torn last line, which the next open recovers as
//     tested here.
//
// # Concurrent writers
//
// TestConcurrentWriters: N writer processes append M messages each to one
// session of one database, opened with default options, while reader
// processes read it in a loop. The session ends with exactly N×M entries
// in one unbroken chain (every entry's parent is the entry before it: no
// accidental sibling branch), every acknowledged append present, and no
// writer saw an error: a busy database is waited for and retried inside
// the engine, bounded by its busy timeout. Every read saw a consistent
// tree: the path from the leaf reaches the root through existing parents,
// paths and counts only grow, the log grows as one chain without gaps,
// the context has a message per entry of the path. With the leaf guard
// (sessiontree.IfLeaf) the writers read the leaf, wait a little (a stale
// view) and append guarded: the losers get a sessiontree.ConflictError,
// retry, and the session still ends with exactly N×M entries in one chain.
// TestStaleWriterConflict shows the guard deterministically: the refused
// write leaves nothing and the other writer's entry is intact.
//
// # Both engines
//
// TestConcurrentWriters, TestStaleWriterConflict and TestCrashSafety run
// the same test bodies on the SQLite engine and on the PostgreSQL engine
// (package pgengine; engines_test.go): a child gets its database as a
// file path or a postgres:// URL. The PostgreSQL server is the one
// internal/pgtest finds (SESSIONTREE_TEST_POSTGRES, as .ci/run sets) or
// starts (a throwaway cluster when PostgreSQL's programs are installed);
// without one the PostgreSQL subtests skip, and fail under CI=true. On
// PostgreSQL the writers serialize on the session's row lock; a crash
// round kills the client in the middle of its transaction, which the
// server rolls back: the checks after each kill (pgengine.DB.Check's
// replay of every session against its branch, counters, labels and
// leaf; every acknowledged write present; at most one unacknowledged
// write per kill) are those of SQLite. What a crash of the server
// itself loses is PostgreSQL's to guarantee (synchronous_commit), and is
// not tested here. TestCLILive runs `sessiontree tail --json` and
// `sessiontree append --claim` as separate processes on each engine: tail
// prints every committed entry in order, a claim refuses another holder
// and a plain append, naming the holder, until released.
//
// TestConcurrentCreate: several processes open a series of database
// files that do not exist yet, each file all at once: every other file at
// the same moment, the others up to a few milliseconds apart so that some
// come while another one migrates. Every one of them opens every file
// (none refuses the half-made file as foreign, none gives up on it as
// busy), each schema is made once (each migration recorded once, the
// application id set), and each database passes the check. TestConcurrentImports: several `sessiontree import` processes
// import one folder of pi's files at once, into an empty store, after the
// files grew, and with nothing new: all exit 0, each file is new (grown)
// to exactly one of them and unchanged to the others, and the store
// holds each session once with every entry of its file.
//
// TestJSONLSecondWriterRefused: while a process holds a session file for
// writing, another process and this one are refused with
// sessiontree.ErrLocked and the file is not changed; readers (a read-only
// open, the command line) are not blocked; a holder killed with SIGKILL
// leaves no stale lock.
//
// # Hostile and damaged input
//
// TestHostileFiles is one table of damaged and hostile session files:
// cycles, missing parents, an entry that is its own parent, identical
// duplicate lines (skipped with a warning in Lenient mode) and
// conflicting duplicate ids (refused in every mode), labels and leaf
// entries aiming at missing entries, compactions keeping an entry off
// their path or missing (documented recovery: the summary stands for
// everything before it, as in pi), a line of 50 MB (smaller in the CI
// run) of image data and of text, a long line that is not JSON, NUL bytes
// between tokens and inside strings, escaped NULs and invalid UTF-8 in
// text and ids (kept byte for byte), JSON nested 20,000 deep, messages
// nested 1,000 deep (SQLite's limit: stored) and 1,001 deep (refused as
// invalid everywhere), headers of version 4, 99 and 1e9, garbage after
// the header, a torn last line, no header, an empty file. Each goes
// through the JSONL backend in every mode, read-only and for writing, the
// store's import in Recover and Lenient mode, the engine's batch append,
// the file check of `sessiontree check` and the command itself, and must
// give its expected outcome: loaded, a line skipped with a warning, or
// refused with a *jsonl.LineError naming the file and the line (and the
// import reports the same); never a panic, a hang (every call runs under
// a timeout) or an allocation beyond a bound proportional to the input,
// and the file is never changed (a version-4 file is never appended to).
//
// TestHostileDatabases: a file that is not a database, a SQLite header
// followed by garbage, a database of another program, a database from the
// future (a newer user_version, or a newer migration applied) are refused
// with their errors and left byte for byte as they were, by the store
// and by the command; a database truncated to one page or to half, or with
// pages overwritten, is refused as corrupt; a garbage WAL file is
// ignored, as SQLite does; an empty file becomes a new database; a cycle
// or a missing parent written behind the engine's back (column, JSON and
// checksum alike, so that it is the tree that is wrong, not one row) is
// found by Check, and a path walked through the cycle off the active
// branch ends in sessiontree.ErrCorrupt.
//
// # Silent corruption
//
// TestSilentCorruption changes a stored entry behind the engine's back
// (issue 13): one letter of a message's text, or its JSON cut short, by a
// raw UPDATE of the entries table. SQLite's own checks see valid pages;
// the entry's checksum (the CRC-32C of its JSON, migration 11) does not
// match. The store's Check reports it as sessiontree.ErrCorrupt naming the
// session and the entry, and every read that hands out entries fails with
// a *sessiontree.CorruptError naming it instead of handing out the
// damaged JSON: the path (packed and row by row), the full path, the log,
// the entry, entries by type, the context and its projection, the export;
// so do `sessiontree check` (exit 1), `branch --json`, `tree --json`,
// `context --json` and `export` (exit 1, nothing of the damage printed,
// no file left by `export -o`). The same letter changed with a checksum
// written to match (a deliberate edit) leaves the entries consistent, and
// Check finds the search index holding a text the entry no longer gives.
//
// # Bounded memory
//
// TestBoundedMemory generates a session whose tool results hold 500 MB
// of payloads (48 MB in the CI run; -short skips it) before its compaction boundary and
// imports it with the sessiontree command. Resuming it (opening the
// store and the session, building the context, reading the branch and
// the stats) in a process of its own keeps the Go heap under 64 MB and
// allocates less than a tenth of the payloads' size (in practice a few
// hundred kilobytes: the payloads are never read); `sessiontree context`
// stays under 64 MB resident. The import streams: a file four times
// larger costs the import at most a few megabytes more at its peak; what
// it holds is one line, a batch of at most 8 MB and SQLite's page cache.
// The JSONL backend keeps a whole session in memory by design (it is pi's
// format) and is not held to this.
//
// # Conditions from outside
//
// Issue 13's unlucky and hostile conditions that come from outside the
// program, each driven through the sessiontree command:
//
//   - TestHugeEntry: a tool output of 24 MB on one line in the CI run
//     (200 MB in the full one; -short skips it) imports within 64 MB plus 4 times the
//     line of memory above what a small line takes (it took 10 to 15
//     times, and about 30 before issue 13); the search index holds the
//     first 1 MiB of its text (a word beyond is not found) while export
//     gives it back whole. TestHugeEntryInterrupted: while the import
//     indexes several outputs of megabytes, an append of another process
//     goes through, and SIGINT
//     stops the import at once, after printing its summary, keeping the
//     chunks of the index committed; the next search does the rest.
//   - TestImportWaitsForWriter: while another process holds the write
//     lock, `import --no-wait` fails at once and imports nothing; `import`
//     says once on stderr that it waits, waits however long (past the 5 s
//     busy timeout in the CI run), then imports every file.
//   - TestFullDiskReport: on a database bounded in size (the store's API)
//     and on a real full file system (a 1 MiB tmpfs in a mount namespace
//     of the command's own; skipped where the system allows none), every
//     file's outcome is reported, failures and the index error name the
//     full disk, and the report comes before the error, with --json too.
//     With room again the same import finishes what failed.
//     TestFullDiskReads: a database closed before its file system filled
//     up is read there (ls, check, context; SQLite alone fails every
//     statement, as it cannot make its -shm file), no file is made beside
//     it, writes fail saying the file system is full, and work with room
//     again.
//   - TestReadsWhileWriting: while another process holds the write lock,
//     `search` (through the index and by reading what is not indexed yet,
//     saying when it had to leave some unread) and `check` answer at once.
//
// # Fuzzing
//
// The fuzz targets live beside the code they fuzz, with their seed
// corpora and any crashers as regression seeds under testdata/fuzz:
// FuzzDecodeEntry (entry decoding, root package), FuzzParseLine and
// FuzzOpenFile (the JSONL line parser and whole files, package jsonl),
// FuzzValid (the JSON scanner, internal/jsonx) and FuzzParseSessionArg
// (the command's SESSION and ENTRY arguments, internal/cli). Run one with
//
//	go test -run='^$' -fuzz='^FuzzOpenFile$' -fuzztime=60s ./jsonl
//
// # Conditions from outside
//
// The tests of issue 13 give the library and the command what a user's
// machine holds besides plain files.
//
// TestSymlinkedFolders: a folder given to import that is a symbolic
// link, pi's sessions folder under a linked PI_CODING_AGENT_DIR or a
// linked ~/.pi (the library's Import() and the command's import),
// folders with link loops (a link to "..", to itself, two links to each
// other, a *.jsonl link to itself, which fails alone), links leading out
// of the folder (to a file, a folder, "/": not followed), and one file
// reached by two paths, in one import and in three (new, unchanged,
// grown: one session, never a conflict with itself). Files are known by
// their resolved path. An upgrade of a legacy file opened through a link
// rewrites the target and keeps the link.
//
// TestSpecialFiles: a named pipe and /dev/zero given to every entry
// point that opens a path a user gives: the JSONL backend read-only and
// for writing, its reader, its upgrade, the store's import, the
// database, the check of a file; and to the command's import, tree,
// info, context, check and --db. Each runs in a child process (a call
// blocked in open(2) on a pipe cannot be stopped otherwise) and must be
// refused in well under a second, with an error that names the path and
// what it is ("... is a named pipe, not a session file") and matches
// sessiontree.ErrNotRegularFile.
//
// TestLongLines: the line limit is 256 MiB by default, documented, and
// --max-line (or SESSIONTREE_MAX_LINE) changes it; a line over it is
// refused with its file and line (a *jsonl.LineError whose Err is a
// *jsonl.LineTooLongError) by the reader, the backend in every mode, the
// import and the command; reading an endless line costs the limit, not
// the line; and `sessiontree append` fed a line without end, or a long
// one, stops at the limit with the input's line number, having appended
// the lines before it, in a few megabytes of memory.
//
// TestListBeyondAPage: `ls --limit N` lists N sessions beyond a page of
// the store's List (1,000), each once, newest first. TestExportThroughLinks:
// export -o writes through a link to a file (made when missing), and
// straight to a named pipe, to /dev/stdout on a pipe or on a file a
// shell opened with >> (appending), to /dev/null, never replacing them
// (devices are reached only through links in the test's folder, so that
// a faulty export replaces a link of the test's, never a device);
// a folder is refused. TestErrorPrefixes: the command's errors and
// Session.Append's over each backend say each step once.
//
// # Privacy and SQL
//
// TestFileModes clears the umask and makes every kind of file the
// library and the command write: databases (with their WAL and
// shared-memory files) in missing folders and in an empty file made
// beforehand (0666), exports in missing folders and over an existing
// file, session files, a torn tail's sidecar, an upgraded legacy file.
// Files are 0600 and folders 0700.
//
// # Read-only media and modes
//
// TestReadOnlyDatabase puts a database on a read-only mount, in a folder
// the user may not write, and in a file at 0400, each after a clean
// close, with the -wal and -shm files a killed writer left, and with that
// -wal file alone (file modes do not hold for root: run as root, the
// test runs the commands as nobody, through runuser). Every read command (ls,
// info, tree, context, branch, search, check, export) works and sees what
// only the -wal file holds; every write command fails with one line
// saying the database is read-only and why; the library's writes fail
// with an error matching sessiontree.ErrReadOnly; no file is made or
// changed. TestReadOnlyFileWritableAgain: with the file at 0400, check
// finds no damage and leaves nothing; after chmod 600, writes and check
// work, also when a plain SQLite reader had left a -wal and a -shm file at
// 0400 (they get the database file's mode back). TestReadOnlyThroughLink:
// a database named through a symbolic link, its target in a read-only
// folder with a -wal file a killed writer left, is read with that -wal
// file (which SQLite keeps beside the target, not the link), whether the
// link's folder is writable or not, and writes say why they fail.
//
// TestHostileStrings and TestHostileStringsCommandLine feed session ids,
// entry ids, names, labels, working directories, metadata and search text
// full of quotes, SQL (`'; DROP TABLE entries; --`), LIKE wildcards (%,
// _), backslashes, FTS5 syntax, NUL bytes, line breaks and non-ASCII text
// through the store and the command, with the database in a folder whose
// name has quotes, % and ?: everything comes back exactly, by id, prefix,
// working directory, name filter (wildcards match literally), label,
// search, export and import again; the schema, the sessions and the
// entries are all still there.
package reliability
