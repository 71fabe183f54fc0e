package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
)

// SessionArg is what a SESSION argument names: a session file to read
// directly, or a session in the database by id or id prefix. Exactly one
// field is set.
type SessionArg struct {
	// File is the path of a session file (pi's JSONL).
	File string
	// ID is a full session id or a prefix of one.
	ID string
}

// ErrBadArgument is matched by the errors of [ParseSessionArg] and
// [ParseEntryArg]: the argument cannot name anything.
var ErrBadArgument = errors.New("bad argument")

// ParseSessionArg reads a SESSION argument. An argument that ends in
// ".jsonl" or contains a path separator is a file path (session ids never
// contain "/"); anything else is a session id or a prefix of one. It looks
// at the text only, never at the file system, so its answer does not
// depend on the directory it runs in. An empty argument, one that is not
// UTF-8, and an id with spaces or control characters are refused.
func ParseSessionArg(arg string) (SessionArg, error) {
	switch {
	case arg == "":
		return SessionArg{}, fmt.Errorf("empty session argument: %w", ErrBadArgument)
	case !utf8.ValidString(arg):
		return SessionArg{}, fmt.Errorf("session argument %q is not valid UTF-8: %w", arg, ErrBadArgument)
	case strings.ContainsRune(arg, 0):
		return SessionArg{}, fmt.Errorf("session argument %q contains a NUL byte: %w", arg, ErrBadArgument)
	case IsSessionFile(arg):
		return SessionArg{File: arg}, nil
	}
	if err := checkID("session id", arg); err != nil {
		return SessionArg{}, err
	}
	return SessionArg{ID: arg}, nil
}

// IsSessionFile reports whether a SESSION argument is a file path: it
// ends in ".jsonl" (in any case) or contains "/" (or "\" on Windows,
// where it is a separator; it is checked everywhere, since ids never
// hold one either).
func IsSessionFile(arg string) bool {
	return strings.HasSuffix(strings.ToLower(arg), ".jsonl") || strings.ContainsAny(arg, `/\`)
}

func checkID(what, s string) error {
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("%s %q contains white space or a control character: %w", what, s, ErrBadArgument)
		}
	}
	return nil
}

// RootEntry is the ENTRY argument of `goto` that means "before the first
// entry".
const RootEntry = "root"

// ParseEntryArg reads an ENTRY argument: an entry id or a prefix of one,
// or, where allowRoot, [RootEntry] for before the first entry, which
// gives "". Empty arguments and ids with spaces or control characters are
// refused.
func ParseEntryArg(arg string, allowRoot bool) (string, error) {
	switch {
	case arg == "":
		return "", fmt.Errorf("empty entry id: %w", ErrBadArgument)
	case !utf8.ValidString(arg):
		return "", fmt.Errorf("entry id %q is not valid UTF-8: %w", arg, ErrBadArgument)
	case allowRoot && arg == RootEntry:
		return "", nil
	}
	if err := checkID("entry id", arg); err != nil {
		return "", err
	}
	return arg, nil
}

// AmbiguousEntryError reports an entry id prefix that several entries of
// a session start with. It matches [sessiontree.ErrNotFound]: no single
// entry was found.
type AmbiguousEntryError struct {
	// Prefix is the prefix given.
	Prefix string
	// Matches are some of the matching ids, in append order.
	Matches []string
}

// Error lists the prefix and the entries it matches.
func (e *AmbiguousEntryError) Error() string {
	return fmt.Sprintf("entry id prefix %q is ambiguous: it matches %s", e.Prefix, strings.Join(e.Matches, ", "))
}

// Is makes errors.Is(err, sessiontree.ErrNotFound) true.
func (e *AmbiguousEntryError) Is(target error) bool { return target == sessiontree.ErrNotFound }

// EditTarget returns the entry a context edit of the ENTRY argument id
// targets, as [ResolveEntry] finds it, but for an entry that is not
// there: then it is id itself, for [sessiontree.Session.EditContext] to
// report after a bad replacement, in pi's order. A prefix several
// entries start with is an error, as everywhere.
func EditTarget(ctx context.Context, st sessiontree.Storage, id string) (string, error) {
	target, err := ResolveEntry(ctx, st, id)
	var missing *sessiontree.EntryNotFoundError
	if errors.As(err, &missing) {
		return id, nil
	}
	return target, err
}

// maxEntryMatches bounds the ids an [AmbiguousEntryError] lists.
const maxEntryMatches = 5

// ResolveEntry returns the id of the entry of st that id names: the entry
// with that exact id, or else the only one whose id starts with it (the
// tree view shows ids cut to 8 characters). It reads the log only when
// the exact id is not found. "" stays "" (before the first entry).
func ResolveEntry(ctx context.Context, st sessiontree.Storage, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	_, err := st.Entry(ctx, id)
	if err == nil || !errors.Is(err, sessiontree.ErrNotFound) {
		return id, err
	}
	var matches []string
	const page = 4096
	for after := int64(0); ; {
		log, err := st.Log(ctx, after, page)
		if err != nil {
			return "", fmt.Errorf("resolve entry %s: %w", id, err)
		}
		for _, e := range log {
			if strings.HasPrefix(e.ID, id) {
				matches = append(matches, e.ID)
			}
		}
		if len(log) < page {
			break
		}
		after = log[len(log)-1].Seq
	}
	switch len(matches) {
	case 0:
		return "", &sessiontree.EntryNotFoundError{ID: id}
	case 1:
		return matches[0], nil
	}
	return "", &AmbiguousEntryError{Prefix: id, Matches: matches[:min(len(matches), maxEntryMatches)]}
}
