package engine

import (
	"database/sql"

	"github.com/sessiontree/sessiontree"
)

// facts are what the engine reads from an entry's JSON when it stores it:
// the tree rules' effects (sessiontree.EffectsOf, their one owner), the
// indexed columns and what it adds to the session's stats, all from
// sessiontree.Facts (one walk of the JSON), and whether the JSON is
// canonical.
type facts struct {
	sessiontree.Effects
	role, customType string
	// canonical: the JSON starts with the entry's four common fields (see
	// isCanonical).
	canonical bool
	// checksum is the JSON's sessiontree.EntryChecksum, read with the
	// other facts so that a batch computes it in its preparing goroutine
	// (see batchPrep), off the writer's path.
	checksum int64
	// stats is what the entry adds to the session's stats
	// (sessiontree.StatsOf, the one owner of that rule).
	stats sessiontree.EntryStats
}

// factsOf reads the facts of e. An entry of a type the engine does not
// know has none beyond being counted: it is stored as it is.
func factsOf(e sessiontree.Entry) facts { return factsFrom(e, sessiontree.FactsOf(e)) }

// factsFrom are the facts of e, whose sessiontree.Facts are sf (read
// while e was built: sessiontree.BuildEntryFacts).
func factsFrom(e sessiontree.Entry, sf sessiontree.Facts) facts {
	return facts{Effects: sf.Effects, role: sf.Message.Role, customType: sf.CustomType,
		canonical: isCanonical(e), checksum: sf.Checksum, stats: sf.Stats}
}

// place computes where entry e, with key pk, goes under parent (nil for a
// root), by sessiontree.Place's rules. ancestorDepth gives the depth of an
// entry if it is an ancestor of e, 0 otherwise.
func place(e sessiontree.Entry, f *facts, pk int64, parent *node, ancestorDepth func(id string) (int64, error)) (node, error) {
	var pp *sessiontree.Placement
	if parent != nil {
		p := parent.placement()
		pp = &p
	}
	p, err := sessiontree.Place(e, &f.Effects, pk, pp, ancestorDepth)
	if err != nil {
		return node{}, err
	}
	return node{pk: p.Key, depth: p.Depth, start: p.Start,
		thinking: nullKey(p.Thinking), model: nullKey(p.Model), tools: nullKey(p.Tools)}, nil
}

// storedIDs are a session's stored entries as the root package's tree
// rules look them up.
type storedIDs struct {
	w       q
	session int64
}

// Taken is false: the entries table's unique index refuses a duplicate.
func (s storedIDs) Taken(string) bool { return false }

func (s storedIDs) Exists(id string) (bool, error) {
	n, err := s.w.node(s.session, id)
	return n != nil, err
}

// placement is n as the root package's rules see it.
func (n *node) placement() sessiontree.Placement {
	return sessiontree.Placement{Key: n.pk, Depth: n.depth, Start: n.start,
		Thinking: n.thinking.Int64, Model: n.model.Int64, Tools: n.tools.Int64}
}

// nullKey is a placement's key as a column: 0 (none) is NULL.
func nullKey(k int64) sql.NullInt64 { return sql.NullInt64{Int64: k, Valid: k != 0} }

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
