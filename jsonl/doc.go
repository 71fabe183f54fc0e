// Package jsonl stores a session in one file of pi's own format: a
// [sessiontree.Storage] over a JSONL session file, and a streaming reader
// for such files.
//
// # The file
//
// The first line is a header, {"type":"session","version":3,"id":<uuid
// v7>,"timestamp":<ISO>,"cwd":<dir>} with an optional "parentSession";
// every other line is one entry, appended as it happens with a single
// write of the entry's JSON and its newline. [Create] makes a file, [Open]
// opens one: it reads every line, checks the tree (unique ids, parents and
// leaf targets that exist, no cycles; a label of a missing entry is kept
// and labels nothing, as in pi), keeps the entries in an in-memory index
// (a [memory.Storage]) and sets the leaf by the leaf rule. A file pi wrote
// has no leaf entries, so its leaf is its last entry; a file this package
// wrote reopens on the leaf it had. pi 1.6.0 knows no leaf entries: it
// resumes a file on its last line whatever that is, so a file whose last
// line is a leaf entry (Storage.SetLeaf, sessiontree.Session.MoveTo
// without a summary, with nothing appended since) resumes in pi where the
// leaf was before the move; the next append ends that. A session to hand
// to pi as it is goes through a database's export with
// store.ExportOptions.ForPi.
//
// # Old versions
//
// Version 1 files (no "version" in the header) have entries without id or
// parentId, linked in file order, and compactions that name their first
// kept entry by firstKeptEntryIndex, an index into the file's JSON lines
// with the header as 0. Version 2 files have messages of role
// "hookMessage", now "custom". Both open as version 3, migrated in memory
// as pi migrates them. pi invents random ids for version-1 entries; this
// package derives them from the session id and the entry's index, so
// opening a file twice gives the same ids. Opening never rewrites a
// file: a legacy file can be read but not appended to until
// [Storage.Upgrade] (or [Upgrade]) rewrites it atomically: a temporary
// file in the same directory, fsync, rename over the original, fsync of
// the directory. Files newer than version 3 are refused
// ([ErrUnsupportedVersion]) and never written.
//
// # Damage
//
// Bad input gives a [*LineError] naming the file and the line, which
// matches [sessiontree.ErrCorrupt] (and [sessiontree.ErrInvalidEntry] for
// an entry with a missing or mistyped field): an empty file, a missing or
// malformed header, an unsupported version, a line that is not JSON, an
// entry without type, id or timestamp, a bad parentId or targetId, a
// duplicate id, a parent that does not exist, a cycle. Reading never
// panics and never loops.
//
// A line is at most [DefaultMaxLineBytes] long, 256 MiB, unless
// [Options.MaxLineBytes] or [ReadOptions.MaxLineBytes] says otherwise. A
// longer line refuses the file in every mode, with a [*LineError] whose
// Err is a [*LineTooLongError], as soon as the limit is passed: memory
// holds at most the limit of it, whatever the file (one without
// newlines, a binary file).
//
// A session file is a regular file. [Open] and [ReadFile] refuse a path
// naming anything else (a named pipe, which would block the read; a
// device such as /dev/zero, which would never end it; a directory) with
// a [*sessiontree.NotRegularFileError] before they read from it.
//
// An entry whose type this version does not know (pi adds types every
// few months) is not damage: it is read, kept and written back byte for
// byte like any other, and [Report.Unknown] counts such entries per type,
// for a caller to warn about once per file.
//
// A torn last line (the file ends in a partial line without newline, as
// after a crash in the middle of a write) is recovered by default
// ([Recover] mode): the entries before it load and [Storage.Report]
// describes it. Opening for writing also copies the torn bytes to a
// sidecar file, <file>.torn-<time>, synced before anything else happens;
// the first write then cuts them from the file, so the new entry starts on
// a clean line and the file reads cleanly ever after. (A last line that
// is complete but lacks its newline gets one before the next entry.) A
// read-only open changes nothing. pi instead ends a torn last line with a
// newline when it opens the file, and a resumed session appends after
// it, so the torn line ends up between entries: Recover mode skips such a
// line too (the start of a JSON object cut short, or NUL bytes, which a
// crash of the machine may leave), reporting it in [Report.Warnings], and
// refuses every other bad line. [Strict] mode refuses any damage;
// [Lenient] mode skips bad lines as pi does, reporting each, and drops an
// exact duplicate of an earlier line with a warning, but still refuses an
// id used twice for different entries.
//
// # One writer
//
// Opening for writing takes an exclusive, non-blocking advisory lock
// (flock) on the file, held until [Storage.Close]. A second writer, in
// another process or in the same one (flock locks belong to the open file
// description, not to the process), gets an error matching
// [sessiontree.ErrLocked], "session is locked by another writer". Opening
// with [Options.ReadOnly] takes no lock, so readers never block a writer
// and are never blocked; a reader that meets a line still being written
// sees it as a torn tail. The lock is advisory: pi itself takes none. So
// that a pi running on the same file cannot be silently overwritten,
// every append first checks that the file is still the size this storage
// left it, and fails with [sessiontree.ErrConflict] if not; so it does
// when the file was deleted, or another file renamed over it (an
// editor's or a sync tool's atomic save), since the append would go to a
// file no path names. (A file moved to another name keeps its appends.)
// Caveats: on
// network file systems flock may be emulated with per-process locks, and
// this package needs flock (Unix) to write at all.
//
// The file is cut in place in two cases only: the torn tail, before the
// first write, and the bytes of a write that failed (or whose fsync did),
// taken back. Both check the size first and cut only bytes this storage
// knows of; a file of another size is left as it is (an error matching
// [sessiontree.ErrConflict]; after a failed write the storage then stops
// writing, its partial line left for the next open to report). On Linux
// the check and the cut run under a write lease on the file (fcntl
// F_SETLEASE), so that no process can open the file between them: pi,
// which opens the file for every append, waits for the moment of the cut
// and appends after it. What remains: a lease is granted only while no
// other process has the file open, so a file kept open elsewhere for more
// than a tenth of a second (a tail -f), a file system or a system without
// leases (NFS, macOS), or a file owned by another user, is cut without
// one, and a writer that appends in the microseconds between the check
// (fstat) and the cut (ftruncate) loses its line. A lease broken by
// another open sends the process SIGIO, which Go ignores unless the
// program asked for it (signal.Notify). [Storage.Upgrade] checks the size
// again once the new file is written, right before it renames it over the
// old one, and refuses if another writer appended meanwhile; what remains
// is a line appended between that check and the rename, which goes with
// the old file.
//
// # Durability
//
// By default an append returns once the line is in the operating system's
// hands, as in pi: it survives a crash of the process, not of the
// machine. [Options.Sync] fsyncs after each append (once per batch).
//
// # Streaming
//
// [Read] yields a file's header and entries one at a time with their line
// numbers and byte offsets, holding one line in memory at a time; the
// SQLite engine imports pi files through it. Each record carries the
// [Position] after it, from which a later read resumes once the file has
// grown. [ParseLine] and [ParseHeader] parse single lines.
//
// # Speed
//
// Opening reads and parses lines in one goroutine while another indexes
// them, and checks each line's JSON once more only in the index. A
// [Storage] answers [sessiontree.StateReader]: for every entry it keeps
// the parent and the latest entries on its path that may set the
// thinking level, the model or the tools, so the state at the leaf costs
// a few lookups instead of a walk over the whole path.
//
// # Concurrency
//
// A [Storage] is safe for concurrent use: reads share the index's lock,
// and writes are serialized by the storage's own mutex, which also guards
// the file.
package jsonl
