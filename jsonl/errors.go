package jsonl

import (
	"errors"
	"fmt"

	"github.com/sessiontree/sessiontree"
)

// ErrUnsupportedVersion is wrapped by the error for a session file whose
// header names a version newer than [CurrentVersion], or one below 1 or
// not whole. Such a file is never read past its header and never
// appended to.
var ErrUnsupportedVersion = errors.New("unsupported session file version")

// LineError reports a problem at one line of a session file. Every
// LineError matches [sessiontree.ErrCorrupt] with errors.Is (the file is
// damaged); through Err it may match more, such as
// [sessiontree.ErrInvalidEntry] for an entry with a missing field or
// [ErrUnsupportedVersion].
type LineError struct {
	// Path is the file's path, or the name given in [ReadOptions.Name];
	// "" when unknown.
	Path string
	// Line is the 1-based line number; the header is line 1.
	Line int
	// Offset is the byte offset of the line's first byte.
	Offset int64
	// Err says what is wrong.
	Err error
}

func (e *LineError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, sessiontree.ErrCorrupt) true.
func (e *LineError) Is(target error) bool { return target == sessiontree.ErrCorrupt }

func corrupt(id, format string, args ...any) error {
	return &sessiontree.CorruptError{EntryID: id, Reason: fmt.Sprintf(format, args...)}
}

// ErrLineTooLong is matched by a [*LineTooLongError].
var ErrLineTooLong = errors.New("line too long")

// LineTooLongError is the Err of the [*LineError] for a line longer than
// the read's limit ([ReadOptions.MaxLineBytes], [Options.MaxLineBytes],
// by default [DefaultMaxLineBytes]). It matches [ErrLineTooLong] with
// errors.Is, and through its LineError [sessiontree.ErrCorrupt].
type LineTooLongError struct {
	// Limit is the longest line accepted, in bytes, newline not counted.
	Limit int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line longer than the limit of %s", formatSize(e.Limit))
}

// Is makes errors.Is(err, ErrLineTooLong) true.
func (e *LineTooLongError) Is(target error) bool { return target == ErrLineTooLong }

// formatSize writes a size in bytes as people read limits: "256 MiB"
// for a whole number of MiB or KiB, else "1000 bytes".
func formatSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
