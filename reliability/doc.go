// Package reliability proves, by tests, that sessiontree loses nothing
// it acknowledged and survives what agent users actually meet: crashes in
// the middle of a write, several processes on one session, damaged and
// hostile files, sessions too big to load, fuzzed input and attempts at
// SQL injection (issue 8). The package has no code of its own; everything
// is in its tests, which drive the public packages (engine, jsonl, store)
// and the sessiontree command as separate processes.
//
// # Running
//
//	go test -race ./reliability                       # what CI runs: every item, under a minute
//	go test -race -short ./reliability                # a smoke run
//	go test ./reliability -reliability.full -timeout 30m
//	SESSIONTREE_RELIABILITY_FULL=1 go test ./reliability -timeout 30m
//
// The full run uses the sizes of issue 8: 100 kill rounds per backend, a
// 500 MB session, a 50 MB line, more writer processes. Run it without
// -race to keep it within a few minutes. Every test logs what it did (add
// -v): rounds, kills, acknowledged writes, entries checked, inputs tried,
// peak memory.
//
// Child processes are this test binary run again with
// -test.run=^TestChild$ and a job in the SESSIONTREE_RELIABILITY_CHILD
// environment variable; they talk to the test on stdout, one line per
// event, each written with a single write so a kill never leaves half a
// line.
//
// # Crash safety (TestCrashSafety)
//
// A child process writes to a session in a loop (messages, some of them
// tool results of hundreds of kilobytes, labels, names, moves of the leaf
// that start new branches, compactions) and prints each entry's id after
// the call that wrote it has returned: an acknowledged write. The test
// kills it with SIGKILL at a random moment (sometimes while it is still
// opening the session, and for JSONL half the time at the moment the file
// ends inside a line, that is in the middle of a write), at least 20
// rounds for each of: the SQLite engine with synchronous=NORMAL and FULL,
// the JSONL backend with and without Options.Sync. After every kill:
//
//   - engine: PRAGMA integrity_check is "ok"; the store's Check (the
//     engine's replay of the log against the materialized branch, the
//     counters, labels and leaf, then the search index) passes;
//   - JSONL: opening for writing recovers a torn last line (kept in a
//     sidecar file, checked byte for byte, then cut), the next append
//     lands on a clean line (the file ends with exactly "\n" + entry +
//     "\n"), and the whole file then reads in Strict mode with the tree
//     checks of `sessiontree check`;
//   - every acknowledged write is present, and at most one entry per kill
//     is present without acknowledgement (the write in flight, which may
//     or may not have made it: both are correct).
//
// At the end `sessiontree check` is run on the database or the file.
//
// # The guarantee, precisely
//
// The tests kill processes; they do not cut power. What they prove is the
// first line of each pair below; the second is what the design gives and
// no test here can show.
//
//   - engine, synchronous=FULL: an acknowledged write survives a crash of
//     the process (tested) and of the machine or a power loss (the WAL is
//     fsynced at every commit).
//   - engine, synchronous=NORMAL (the default), in WAL mode: an
//     acknowledged write survives a crash of the process (tested): the
//     commit is in the WAL file, in the operating system's page cache,
//     when the call returns. On power loss or an operating-system crash the
//     last transactions before the latest checkpoint's sync may roll back;
//     the database is never corrupted (SQLite's WAL guarantee), so what
//     remains is a consistent earlier state.
//   - JSONL with Sync: the line is fsynced before the append returns; it
//     survives a process crash (tested) and a power loss.
//   - JSONL without Sync (the default, as pi): acknowledged means the whole
//     line has been handed to the operating system (one write(2), in the
//     page cache): it survives a kill of the process (tested) but not a
//     power loss or kernel crash, which may lose the unsynced tail of the
//     file, or leave a torn last line, which the next open recovers as
//     tested here.
//
// # Concurrent writers (TestConcurrentWriters, TestStaleWriterConflict,
// TestJSONLSecondWriterRefused)
//
// N writer processes append M messages each to one session of one
// database, opened with default options, while reader processes read it
// in a loop. The session ends with exactly N×M entries, one unbroken chain
// (every entry's parent is the entry before it: no accidental sibling
// branch), every acknowledged append present, and no writer ever saw an
// error (busy waits are retried inside the engine, bounded by its busy
// timeout). Every read saw a consistent tree: the path from the leaf
// reaches the root through existing parents, paths and counts only grow,
// the log grows as one chain without gaps. With the leaf guard
// (sessiontree.IfLeaf) writers whose view is stale get a
// sessiontree.ConflictError, retry, and still end with N×M entries in one
// chain; TestStaleWriterConflict shows the same deterministically, and
// that the refused write leaves nothing. For JSONL, a process holding a
// file for writing makes every other writer fail with
// sessiontree.ErrLocked without touching the file, readers are not
// blocked, and a holder killed with SIGKILL leaves no stale lock.
package reliability
