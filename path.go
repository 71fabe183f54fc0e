package sessiontree

import (
	"context"
	"slices"
)

// HasRetainedTail reports whether a compaction carries its kept messages
// inline ("retainedTail") rather than pointing at them.
func HasRetainedTail(e Entry) bool { return retainedTail(e.Field("retainedTail")) }

// FirstKeptEntryID returns a compaction's "firstKeptEntryId", "" if none.
func FirstKeptEntryID(e Entry) string {
	s, _ := stringOf(e.Field("firstKeptEntryId"))
	return s
}

// Lookup finds an entry by id for [WalkPath]; it reports false when the
// entry does not exist.
type Lookup func(id string) (Entry, bool)

// WalkPath computes a path for backends that hold their index in memory.
// It walks from entry from through parent ids, cut at the compaction
// boundary unless full (DESIGN.md section 4), and returns it root first.
// maxLen bounds the walk: a session of n entries has no path longer than n,
// so a longer walk is a cycle and gives a [CorruptError].
func WalkPath(ctx context.Context, from string, full bool, maxLen int, get Lookup) ([]Entry, error) {
	if from == "" {
		return nil, nil
	}
	e, ok := get(from)
	if !ok {
		return nil, &EntryNotFoundError{ID: from}
	}
	var path []Entry
	cut := PathCutter{Full: full}
	for {
		if len(path) >= maxLen {
			return nil, &CorruptError{EntryID: e.ID, Reason: "cycle in parent ids"}
		}
		if len(path)%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if len(path) == cap(path) {
			// Double: append grows long slices by a quarter, which for a
			// path of 100,000 entries allocates five times its size.
			path = slices.Grow(path, max(len(path), 64))
		}
		path = append(path, e)
		if cut.Stop(e) || e.ParentID == "" {
			break
		}
		parent, ok := get(e.ParentID)
		if !ok {
			return nil, &CorruptError{EntryID: e.ID, Reason: "parent " + e.ParentID + " does not exist"}
		}
		e = parent
	}
	slices.Reverse(path)
	return path, nil
}

// PathCutter applies DESIGN.md's compaction rule to a walk from an entry up
// towards the root: feed it each entry met, newest first, and stop when
// Stop returns true. The zero value cuts; Full disables cutting.
type PathCutter struct {
	// Full means never cut: walk to the root.
	Full bool
	seen bool
	keep string
}

// Stop reports whether the walk ends with entry e (e included).
func (c *PathCutter) Stop(e Entry) bool {
	if c.Full {
		return false
	}
	if !c.seen && e.Type == TypeCompaction {
		c.seen = true
		f := EffectsOf(e, "")
		if f.cutsAtSelf(e.ID) {
			return true
		}
		c.keep = f.Keep
	}
	return c.seen && c.keep != "" && e.ID == c.keep
}
