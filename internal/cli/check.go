package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// CheckFile checks a session file without changing it and returns every
// problem found, nil when there is none: the Problems of [InspectFile]
// with the default line limit.
func CheckFile(ctx context.Context, path string) ([]error, error) {
	c, err := InspectFile(ctx, path, 0)
	return c.Problems, err
}

// FileCheck is what [InspectFile] found in a session file.
type FileCheck struct {
	// Problems are the damage found, nil when there is none.
	Problems []error
	// Unknown counts the entries of types this version does not know:
	// kept as they are, not a problem, a warning to show once for the
	// file.
	Unknown sessiontree.UnknownTypes
}

// InspectFile checks a session file without changing it. Its problems are
// each damaged line (read in lenient mode, so that one bad line does not
// hide the next), or the error that makes the file unreadable (a bad
// header, an id used twice, a cycle), then the problems of the tree of
// what could be read, as [CheckStorage] finds them. The error is for
// failures to read, not for problems found. Lines are at most maxLine
// bytes long (jsonl.Options.MaxLineBytes; 0: the default, 256 MiB): a
// longer one is a problem that ends the read.
func InspectFile(ctx context.Context, path string, maxLine int) (FileCheck, error) {
	st, err := jsonl.Open(ctx, path, jsonl.Options{ReadOnly: true, Mode: jsonl.Lenient, MaxLineBytes: maxLine})
	if err != nil {
		if errors.Is(err, sessiontree.ErrCorrupt) || errors.Is(err, jsonl.ErrUnsupportedVersion) {
			return FileCheck{Problems: []error{err}}, nil
		}
		return FileCheck{}, err
	}
	defer st.Close()
	r := st.Report()
	c := FileCheck{Unknown: r.Unknown}
	for _, w := range r.Warnings {
		c.Problems = append(c.Problems, w)
	}
	more, err := CheckStorage(ctx, st)
	c.Problems = append(c.Problems, more...)
	return c, err
}

// CheckStorage checks the tree of any storage and returns every problem
// found: entries whose parent or leaf target does not exist (a label of
// a missing entry is none: it labels nothing, sessiontree.CheckTarget), and a
// leaf whose path to the root cannot be walked (a cycle or a broken
// parent). The error is for failures to read, not for problems found.
func CheckStorage(ctx context.Context, st sessiontree.Storage) ([]error, error) {
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		return nil, err // the storage names the read
	}
	ids := make(loggedIDs, len(log))
	for _, e := range log {
		ids[e.ID] = true
	}
	var problems []error
	for _, e := range log {
		if err := sessiontree.CheckParent(e, ids); err != nil {
			problems = append(problems, err)
		}
		f := sessiontree.EffectsOf(e, "")
		var nf *sessiontree.EntryNotFoundError
		if err := sessiontree.CheckTarget(&f, ids); errors.As(err, &nf) {
			problems = append(problems, &sessiontree.CorruptError{EntryID: e.ID, Reason: "target " + nf.ID + " does not exist"})
		}
	}
	leaf, err := st.Leaf(ctx)
	if err != nil {
		return problems, fmt.Errorf("read leaf: %w", err)
	}
	if leaf != "" && !ids[leaf] {
		problems = append(problems, &sessiontree.CorruptError{Reason: "leaf " + leaf + " does not exist"})
	} else if _, err := st.FullPath(ctx, leaf); err != nil {
		if !errors.Is(err, sessiontree.ErrCorrupt) && !errors.Is(err, sessiontree.ErrNotFound) {
			return problems, fmt.Errorf("walk the active path: %w", err)
		}
		problems = append(problems, fmt.Errorf("active path: %w", err))
	}
	return problems, nil
}

// loggedIDs are every id of a log, as the tree rules look them up: the
// whole log counts as earlier, so an entry whose parent comes later is no
// problem here (the JSONL reader reports it).
type loggedIDs = sessiontree.EarlierMap[bool]
