package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/jsonx"
	"github.com/sessiontree/sessiontree/internal/lines"
	"github.com/sessiontree/sessiontree/jsonl"
)

// InputError reports a line of `append` input that is not an entry. It
// matches [sessiontree.ErrInvalidEntry].
type InputError struct {
	// Line is the 1-based line number of the input.
	Line int
	// Err says what is wrong.
	Err error
}

// Error names the input line and what is wrong with it.
func (e *InputError) Error() string { return fmt.Sprintf("input line %d: %v", e.Line, e.Err) }

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, sessiontree.ErrInvalidEntry) true.
func (e *InputError) Is(target error) bool { return target == sessiontree.ErrInvalidEntry }

// ParseDraft reads one entry to append, given as pi writes entries but
// without "parentId", which the store assigns: {"type":"message",
// "message":{...}}. "id" and "timestamp" are optional; without them the
// store makes a fresh id and stamps the time of the append; an id must be
// one an ENTRY argument can name ([ParseEntryArg], not "root"). Every other
// field is kept, in its order, byte for byte. A leaf entry is refused: the
// leaf moves with `goto`.
func ParseDraft(line []byte) (sessiontree.Draft, error) {
	var d sessiontree.Draft
	var fields bytes.Buffer
	fields.WriteByte('{')
	hasType := false
	err := jsonx.ObjectMembers(line, func(k, v []byte) error {
		var err error
		switch {
		case jsonx.KeyEquals(k, "type"):
			var s string
			s, err = jsonx.Unquote(v)
			if err != nil {
				return errors.New(`"type" must be a string`)
			}
			d.Type, hasType = sessiontree.EntryType(s), true
		case jsonx.KeyEquals(k, "parentId"):
			return errors.New(`"parentId" is assigned by the store: leave it out (the entry goes under the current leaf)`)
		case jsonx.KeyEquals(k, "id"):
			if d.ID, err = jsonx.Unquote(v); err != nil || d.ID == "" {
				return errors.New(`"id" must be a non-empty string`)
			}
			if _, err := ParseEntryArg(d.ID, false); err != nil || d.ID == RootEntry {
				return fmt.Errorf(`"id" %q: an entry id has no white space or control character and is not %q, so that ENTRY arguments can name it`, d.ID, RootEntry)
			}
		case jsonx.KeyEquals(k, "timestamp"):
			if d.Timestamp, err = jsonx.Unquote(v); err != nil {
				return errors.New(`"timestamp" must be a string`)
			}
			if _, err := sessiontree.ParseTime(d.Timestamp); err != nil {
				return err
			}
		default:
			if fields.Len() > 1 {
				fields.WriteByte(',')
			}
			fields.Write(k)
			fields.WriteByte(':')
			fields.Write(v)
		}
		return nil
	})
	switch {
	case err != nil:
		return sessiontree.Draft{}, err
	case !hasType || d.Type == "":
		return sessiontree.Draft{}, errors.New(`missing "type"`)
	case d.Type == sessiontree.TypeLeaf:
		return sessiontree.Draft{}, errors.New("leaf entries cannot be appended: move the leaf with goto")
	}
	fields.WriteByte('}')
	d.Fields = fields.Bytes()
	return d, nil
}

// ReadDrafts yields the entries of r, one JSON object per line (blank
// lines are skipped), with their line numbers. A line that is not an entry
// (ParseDraft), or that lacks a field its type requires
// ([sessiontree.CheckDraftFields]), yields an [*InputError] and ends the
// sequence; so does a read error.
// Lines are read one at a time, so a caller can append each before the
// next arrives.
//
// A line is at most maxLine bytes long, newline not counted; 0 means
// jsonl.DefaultMaxLineBytes (256 MiB), the session files' limit. A longer
// line is refused as soon as the limit is passed, with an [*InputError]
// whose Err is a *jsonl.LineTooLongError: memory holds at most the limit
// of it, so an input without newlines (/dev/zero) ends there.
func ReadDrafts(ctx context.Context, r io.Reader, maxLine int) iter.Seq2[sessiontree.Draft, error] {
	if maxLine <= 0 {
		maxLine = jsonl.DefaultMaxLineBytes
	}
	return func(yield func(sessiontree.Draft, error) bool) {
		lr := lines.NewReader(r, 64<<10, maxLine)
		for n := 1; ; n++ {
			if err := ctx.Err(); err != nil {
				yield(sessiontree.Draft{}, err)
				return
			}
			line, err := lr.Next()
			switch {
			case errors.Is(err, io.EOF):
				return
			case errors.Is(err, lines.ErrTooLong):
				yield(sessiontree.Draft{}, &InputError{Line: n, Err: &jsonl.LineTooLongError{Limit: maxLine}})
				return
			case err != nil:
				yield(sessiontree.Draft{}, fmt.Errorf("read input: %w", err))
				return
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			d, perr := ParseDraft(bytes.TrimSpace(line))
			if perr == nil {
				perr = sessiontree.CheckDraftFields(d)
			}
			if perr != nil {
				yield(sessiontree.Draft{}, &InputError{Line: n, Err: perr})
				return
			}
			if !yield(d, nil) {
				return
			}
		}
	}
}
