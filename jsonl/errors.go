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
