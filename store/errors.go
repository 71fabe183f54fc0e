package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sessiontree/sessiontree"
)

// Sentinel errors of the store. Errors are wrapped with the step that
// failed; test them with errors.Is. Conditions the root package already
// names use its sentinels: a missing session or entry matches
// sessiontree.ErrNotFound, a conflicting import sessiontree.ErrConflict,
// damaged data sessiontree.ErrCorrupt.
var (
	// ErrAmbiguous is matched by an [*AmbiguousError]: a session id
	// prefix that more than one session starts with.
	ErrAmbiguous = errors.New("ambiguous session id prefix")
	// ErrBadQuery (the root's) is matched by a [*QueryError]: a search
	// query the store cannot parse (store/query.go), one the engine
	// refuses, or an empty one.
	ErrBadQuery = sessiontree.ErrBadQuery
	// ErrBadCursor is returned by [Store.List] for an After cursor that
	// no earlier page returned.
	ErrBadCursor = errors.New("malformed list cursor")
	// ErrNotUserMessage is returned by [Store.Fork] with
	// [ForkOptions.Before] naming an entry that is not a user message:
	// only a prompt can be re-edited.
	ErrNotUserMessage = errors.New("not a user message")
	// ErrNullLeaf is returned by [Store.Export] with [ExportOptions.ForPi]
	// for a session whose leaf is null (moved before the first entry)
	// while it has entries: the released pi resumes on the last line of a
	// file and cannot be told to resume before all of them.
	ErrNullLeaf = errors.New("the leaf is before the first entry, which pi cannot resume at")
	// ErrBadOptions is returned for options that contradict each other,
	// such as two fork points.
	ErrBadOptions = errors.New("invalid options")
)

// AmbiguousError reports a session id prefix that several sessions start
// with. It matches [ErrAmbiguous].
type AmbiguousError struct {
	// Prefix is the prefix that was given.
	Prefix string
	// Matches are the ids of matching sessions in id order, at most
	// [MaxAmbiguousMatches].
	Matches []string
	// More is true when more sessions match than Matches lists.
	More bool
}

// MaxAmbiguousMatches is how many matching ids an [AmbiguousError] lists.
const MaxAmbiguousMatches = 10

// Error lists the matching ids.
func (e *AmbiguousError) Error() string {
	more := ""
	if e.More {
		more = ", ..."
	}
	return fmt.Sprintf("session id prefix %q is ambiguous: it matches %s%s", e.Prefix, strings.Join(e.Matches, ", "), more)
}

// Is makes errors.Is(err, ErrAmbiguous) true.
func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// QueryError reports a search query the store cannot parse
// (store/query.go), or one the engine refused. It matches [ErrBadQuery].
type QueryError struct {
	// Query is the query as given.
	Query string
	// Reason says what is wrong and where, e.g. `syntax error near "."
	// (at byte 5)`.
	Reason string
}

// Error gives the query and the reason.
func (e *QueryError) Error() string {
	return fmt.Sprintf("search query %q: %s", e.Query, e.Reason)
}

// Is makes errors.Is(err, ErrBadQuery) true.
func (e *QueryError) Is(target error) bool { return target == ErrBadQuery }
