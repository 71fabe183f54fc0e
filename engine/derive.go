package engine

import (
	"encoding/json"

	"github.com/sessiontree/sessiontree"
)

// facts are what the engine reads from an entry's JSON when it stores it:
// the indexed columns, what it contributes to the session's state and
// stats, and how it affects paths and the context state.
type facts struct {
	role, customType, targetID string
	// canonical: the JSON starts with the entry's four common fields (see
	// isCanonical).
	canonical bool
	// checksum is the JSON's EntryChecksum, read with the other facts so
	// that a batch computes it in its preparing goroutine (see
	// batchPrep), off the writer's path.
	checksum int64
	// stats is what the entry adds to the session's stats
	// (sessiontree.StatsOf, the one owner of that rule).
	stats sessiontree.EntryStats
	// setsThinking, setsModel, setsTools: the entry is the latest of that
	// setting on its own full path (sessiontree.State.Apply would take it).
	setsThinking, setsModel, setsTools bool
	// compaction: hasTail ends the path at the entry itself; otherwise
	// keep (may be "") is where the path starts if it is an ancestor.
	compaction bool
	hasTail    bool
	keep       string
	// setsName: a session_info entry; name is the name it sets ("" clears).
	setsName bool
	name     string
	// label: a label entry; labelText "" clears.
	label     bool
	labelText string
}

// factsOf reads the facts of e. An entry of a type the engine does not
// know has none beyond being counted: it is stored as it is.
func factsOf(e sessiontree.Entry) facts {
	f := facts{canonical: isCanonical(e), checksum: EntryChecksum(e.Raw), stats: sessiontree.StatsOf(e)}
	switch e.Type {
	case sessiontree.TypeMessage:
		f.role = f.stats.Role
		f.setsModel = f.role == "assistant"
	case sessiontree.TypeThinkingLevelChange:
		_, f.setsThinking = e.String("thinkingLevel")
	case sessiontree.TypeModelChange:
		f.setsModel = true
	case sessiontree.TypeActiveToolsChange:
		var names []string
		raw, ok := e.Field("activeToolNames")
		f.setsTools = ok && json.Unmarshal(raw, &names) == nil
	case sessiontree.TypeCompaction:
		f.compaction = true
		f.hasTail = sessiontree.HasRetainedTail(e)
		f.keep = sessiontree.FirstKeptEntryID(e)
	case sessiontree.TypeCustom, sessiontree.TypeCustomMessage:
		f.customType, _ = e.String("customType")
	case sessiontree.TypeLabel:
		f.label = true
		f.targetID = e.TargetID()
		f.labelText = sessiontree.LabelOf(e)
	case sessiontree.TypeLeaf:
		f.targetID = e.TargetID()
	case sessiontree.TypeSessionInfo:
		f.setsName = true
		f.name = sessiontree.NameOf(e)
	}
	return f
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
