package sessiontree

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// Sentinel errors. Every backend returns (a wrapping of) the same sentinel
// for the same condition, so callers test with errors.Is whatever storage
// they use.
var (
	// ErrNotFound is returned when a session or an entry does not exist.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt is returned when stored data breaks the tree's invariants:
	// a parent that does not exist, a cycle, duplicate ids, unreadable records.
	ErrCorrupt = errors.New("corrupt session")
	// ErrInvalidEntry is returned when an entry given to a backend is
	// malformed: missing type, id or timestamp, a field its type requires
	// missing or of the wrong JSON type. A type this package does not
	// know is not malformed (see [EntryType.Known]).
	ErrInvalidEntry = errors.New("invalid entry")
	// ErrConflict is returned when a guarded write finds the leaf moved
	// (see [AppendOptions.IfLeaf]), or when data to import disagrees with
	// what is already stored.
	ErrConflict = errors.New("conflict")
	// ErrStorage is returned when the underlying file or database fails.
	ErrStorage = errors.New("storage failure")
	// ErrDiskFull is returned, together with [ErrStorage], when a write
	// fails because the disk (or a size limit set on the database) has no
	// room left for it. The failed write leaves nothing behind; what was
	// committed before is intact. The SQLite engine returns it; the JSONL
	// backend returns the operating system's error (syscall.ENOSPC) within
	// ErrStorage.
	ErrDiskFull = errors.New("disk full")
	// ErrCommitUnknown is returned, together with [ErrStorage], when a
	// write's commit was sent to a database server and the connection
	// failed (or the write's context ended) before the server's answer:
	// the write may have been stored or not, and it is not tried again
	// inside, which could store it twice. A caller that tries an append
	// again should give its draft an id ([Draft].ID): a second append of
	// an entry that was stored is then refused with an [IDTakenError],
	// which matches [ErrConflict]; so is a batch sent again. Only
	// the PostgreSQL engine returns it.
	ErrCommitUnknown = errors.New("commit outcome unknown")
	// ErrLocked is returned when another writer holds the session: the
	// database's write lock for longer than the busy timeout, or a live
	// writer claim (a [ClaimedError]).
	ErrLocked = errors.New("session is locked by another writer")
	// ErrClosed is returned by a storage used after Close.
	ErrClosed = errors.New("storage is closed")
	// ErrReadOnly is returned when a write is attempted on storage opened
	// for reading only: a session file opened read-only, a database the
	// engine could open for reading only (a read-only mount, a folder or
	// file the user may not write).
	ErrReadOnly = errors.New("storage is read-only")
	// ErrBadUsageQuery is returned for a [UsageQuery] that
	// [UsageQuery.Validate] refuses: an unknown grouping, a date that is
	// not YYYY-MM-DD, or bounds the wrong way round.
	ErrBadUsageQuery = errors.New("invalid usage query")
)

// EntryNotFoundError reports an entry id that does not exist in the session.
// It matches [ErrNotFound] with errors.Is. Its message is pi's:
// "Entry <id> not found"; for an empty id, where pi's reads "Entry  not
// found", it says "entry id is empty".
type EntryNotFoundError struct {
	ID string
}

func (e *EntryNotFoundError) Error() string {
	if e.ID == "" {
		return "entry id is empty"
	}
	return fmt.Sprintf("Entry %s not found", e.ID)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *EntryNotFoundError) Is(target error) bool { return target == ErrNotFound }

// CorruptError reports broken stored data at one entry. It matches
// [ErrCorrupt] with errors.Is.
type CorruptError struct {
	// EntryID is the entry where the problem was found ("" if none).
	EntryID string
	// Reason says what is wrong, e.g. "parent 1a2b3c4d does not exist".
	Reason string
}

func (e *CorruptError) Error() string {
	if e.EntryID == "" {
		return "corrupt session: " + e.Reason
	}
	return fmt.Sprintf("corrupt session: entry %s: %s", e.EntryID, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// IDTakenError refuses an entry whose id the session held before the
// write: a [Draft] that gives its own id, or an entry of a batch
// ([BatchAppender]), as when a write whose outcome was unknown
// ([ErrCommitUnknown]) is sent again. The stored data is sound; only
// the write conflicts with it. It matches [ErrConflict] with errors.Is.
// (An id twice in one batch or one file is a [CorruptError].)
type IDTakenError struct {
	// ID is the entry id the session holds.
	ID string
}

func (e *IDTakenError) Error() string { return "entry id " + e.ID + " already used" }

// Is makes errors.Is(err, ErrConflict) true.
func (e *IDTakenError) Is(target error) bool { return target == ErrConflict }

// InvalidEntryError reports why an entry was refused. It matches
// [ErrInvalidEntry] with errors.Is.
type InvalidEntryError struct {
	// EntryID is the entry's id, when it has one.
	EntryID string
	// Reason says what is wrong, e.g. `missing "timestamp"`.
	Reason string
}

func (e *InvalidEntryError) Error() string {
	if e.EntryID == "" {
		return "invalid entry: " + e.Reason
	}
	return fmt.Sprintf("invalid entry %s: %s", e.EntryID, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidEntry) true.
func (e *InvalidEntryError) Is(target error) bool { return target == ErrInvalidEntry }

// ConflictError reports a guarded write that found another leaf. It matches
// [ErrConflict] with errors.Is.
type ConflictError struct {
	// Want is the leaf the caller expected ("" for an empty session).
	Want string
	// Got is the leaf actually found.
	Got string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflict: leaf is %s, want %s", leafName(e.Got), leafName(e.Want))
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

func leafName(id string) string {
	if id == "" {
		return "null"
	}
	return fmt.Sprintf("%q", id)
}

// CheckLeafGuard returns a [ConflictError] when opts carries a guard that
// current does not satisfy. Backends call it inside their write transaction.
func CheckLeafGuard(opts AppendOptions, current string) error {
	if opts.IfLeaf != nil && *opts.IfLeaf != current {
		return &ConflictError{Want: *opts.IfLeaf, Got: current}
	}
	return nil
}

// ErrEditRefused is returned when a context edit is refused because of
// what it targets or what it replaces with (see [EditRefusedError]).
var ErrEditRefused = errors.New("context edit refused")

// EditRefusal says why [Session.EditContext] refused an edit.
type EditRefusal int

// The refusals of [Session.EditContext], in the order they are checked
// (pi 1.6.0's appendContextEdit). A missing target is an
// [EntryNotFoundError] instead, between the first and the second.
const (
	// EditBadReplacement: the replacement is neither nil nor an object
	// whose content is a string or an array.
	EditBadReplacement EditRefusal = iota + 1
	// EditOffBranch: the target is not on the active branch.
	EditOffBranch
	// EditNotEditable: the target contributes no editable content (only
	// custom_message entries and user, assistant and toolResult messages
	// do).
	EditNotEditable
)

// EditRefusedError reports a refused context edit with pi's message. It
// matches [ErrEditRefused] with errors.Is.
type EditRefusedError struct {
	// TargetID is the entry the edit named.
	TargetID string
	// Reason is why it was refused.
	Reason EditRefusal
	// Null says the replacement refused was JSON null, which pi's
	// message ("must be null or ...") would seem to allow: pi's null is
	// the Go caller's nil replacement. The message then says so.
	Null bool
}

func (e *EditRefusedError) Error() string {
	switch {
	case e.Reason == EditOffBranch:
		return fmt.Sprintf("Entry %s is not on the active branch", e.TargetID)
	case e.Reason == EditNotEditable:
		return fmt.Sprintf("Entry %s does not contribute editable model content", e.TargetID)
	case e.Null:
		return "context edit replacement is JSON null, which is not content: " +
			"pass a nil replacement to drop what the entry contributes, or a JSON string or array"
	}
	return "Context edit replacement must be null or contain string/array content"
}

// Is makes errors.Is(err, ErrEditRefused) true.
func (e *EditRefusedError) Is(target error) bool { return target == ErrEditRefused }

// ErrNotRegularFile is matched by a [*NotRegularFileError]: a path given
// as a session file or a database names something else, such as a named
// pipe or a device. Such a path is refused before it is opened for
// reading, which for a named pipe would block and for a device such as
// /dev/zero would read without end.
var ErrNotRegularFile = errors.New("not a regular file")

// NotRegularFileError reports a path that names something other than a
// regular file where one is needed. It matches [ErrNotRegularFile] with
// errors.Is. Its message names the path and what it is: "/tmp/p is a
// named pipe, not a session file".
type NotRegularFileError struct {
	// Path is the path as given.
	Path string
	// Mode is the file's type bits (fs.ModeNamedPipe, fs.ModeDevice, ...).
	Mode fs.FileMode
	// Want says what the path should have been: "session file",
	// "database file".
	Want string
}

func (e *NotRegularFileError) Error() string {
	return fmt.Sprintf("%s is %s, not a %s", e.Path, fileKind(e.Mode), e.Want)
}

// Is makes errors.Is(err, ErrNotRegularFile) true.
func (e *NotRegularFileError) Is(target error) bool { return target == ErrNotRegularFile }

// fileKind names a file's type for people.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// ClaimedError reports a session another writer holds a live claim on
// (see [Claimer]): a second claim, or a write made without the claim. It
// matches [ErrLocked] with errors.Is.
type ClaimedError struct {
	// Session is the session id.
	Session string
	// Holder is who holds the claim, as it named itself.
	Holder string
	// Expires is when the claim lapses unless its holder writes or
	// renews it first.
	Expires time.Time
}

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("session %s is claimed by %q until %s", e.Session, e.Holder, FormatTime(e.Expires))
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *ClaimedError) Is(target error) bool { return target == ErrLocked }

// ErrStaleClaim is matched by a [*StaleClaimError]: a write, renewal or
// release through a claim that is no longer the session's current one.
var ErrStaleClaim = errors.New("stale claim")

// ErrBadClaim is returned for a claim asked with an empty holder name.
var ErrBadClaim = errors.New("invalid claim")

// StaleClaimError reports a claim that was taken over (by a higher fence)
// or released: what was done through it is refused and nothing written.
// It matches [ErrStaleClaim] with errors.Is.
type StaleClaimError struct {
	// Session is the session id.
	Session string
	// Holder and Fence are the claim used.
	Holder string
	Fence  int64
	// Current and CurrentFence are the session's claim now; Current is
	// "" when it was released and nobody has claimed it since.
	Current      string
	CurrentFence int64
}

func (e *StaleClaimError) Error() string {
	if e.Current == "" {
		return fmt.Sprintf("claim of %q on session %s (fence %d) was released", e.Holder, e.Session, e.Fence)
	}
	return fmt.Sprintf("claim of %q on session %s (fence %d) was taken over by %q (fence %d)",
		e.Holder, e.Session, e.Fence, e.Current, e.CurrentFence)
}

// Is makes errors.Is(err, ErrStaleClaim) true.
func (e *StaleClaimError) Is(target error) bool { return target == ErrStaleClaim }
