package jsonl

import (
	"context"
	"sync"

	"github.com/sessiontree/sessiontree"
)

var _ sessiontree.StateReader = (*Storage)(nil)

// stateLinks let State find the settings in effect at an entry without
// walking its whole path. For each entry (by Seq-1) they hold the Seq of
// its parent and, for each setting, the Seq of the latest entry on its
// path (itself included) that may set it, judged by type alone: a
// thinking-level change, a model change or any message, a tools change.
// State follows them back until a candidate really sets the value (an
// assistant message, a well-formed level or tool list), so it reads a few
// entries instead of all of them. Zero means none.
type stateLinks struct {
	mu    sync.RWMutex // guards links
	links []entryLinks
}

type entryLinks struct {
	parent, thinking, model, tools int32
}

// add records the links of the entry e with sequence number e.Seq, whose
// parent has sequence number parentSeq (0 for a root). Entries must come
// in Seq order; a gap (an entry added while links were being computed
// elsewhere) leaves the rest to the fallback.
func (s *stateLinks) add(e sessiontree.Entry, parentSeq int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if int64(len(s.links)) != e.Seq-1 {
		return
	}
	var l entryLinks
	if parentSeq > 0 && parentSeq <= int64(len(s.links)) {
		l = s.links[parentSeq-1]
		l.parent = int32(parentSeq)
	}
	seq := int32(e.Seq)
	switch e.Type {
	case sessiontree.TypeThinkingLevelChange:
		l.thinking = seq
	case sessiontree.TypeModelChange, sessiontree.TypeMessage:
		l.model = seq
	case sessiontree.TypeActiveToolsChange:
		l.tools = seq
	}
	s.links = append(s.links, l)
}

func (s *stateLinks) get(seq int64) (entryLinks, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if seq < 1 || seq > int64(len(s.links)) {
		return entryLinks{}, false
	}
	return s.links[seq-1], true
}

// State returns the state in effect at entry from ("" gives the default
// state): the same answer as walking the full path and applying each
// entry ([sessiontree.State.Apply]), found through the links.
func (s *Storage) State(ctx context.Context, from string) (sessiontree.State, error) {
	st := sessiontree.DefaultState()
	if from == "" {
		return st, ctx.Err()
	}
	e, err := s.mem.Entry(ctx, from)
	if err != nil {
		return sessiontree.State{}, err
	}
	l, ok := s.state.get(e.Seq)
	if !ok {
		return s.walkState(ctx, from)
	}
	fields := []struct {
		first int32
		next  func(entryLinks) int32
		sets  func(*sessiontree.Effects) bool
	}{
		{l.thinking, func(l entryLinks) int32 { return l.thinking }, func(f *sessiontree.Effects) bool { return f.SetsThinking }},
		{l.model, func(l entryLinks) int32 { return l.model }, func(f *sessiontree.Effects) bool { return f.SetsModel }},
		{l.tools, func(l entryLinks) int32 { return l.tools }, func(f *sessiontree.Effects) bool { return f.SetsTools }},
	}
	for _, f := range fields {
		for seq, steps := f.first, 0; seq != 0; steps++ {
			if steps%1024 == 1023 {
				if err := ctx.Err(); err != nil {
					return sessiontree.State{}, err
				}
			}
			c, err := s.bySeq(ctx, int64(seq))
			if err != nil {
				return sessiontree.State{}, err
			}
			if cf := sessiontree.EffectsOf(c, sessiontree.MessageInfoOf(c).Role); f.sets(&cf) {
				st.Apply(c)
				break
			}
			cl, ok := s.state.get(int64(seq))
			if !ok || cl.parent == 0 {
				break
			}
			pl, _ := s.state.get(int64(cl.parent))
			seq = f.next(pl)
		}
	}
	return st, nil
}

// walkState is [sessiontree.StateAt]'s way: walk the full path.
func (s *Storage) walkState(ctx context.Context, from string) (sessiontree.State, error) {
	path, err := s.mem.FullPath(ctx, from)
	if err != nil {
		return sessiontree.State{}, err
	}
	st := sessiontree.DefaultState()
	for _, e := range path {
		st.Apply(e)
	}
	return st, nil
}

func (s *Storage) bySeq(ctx context.Context, seq int64) (sessiontree.Entry, error) {
	es, err := s.mem.Log(ctx, seq-1, 1)
	if err != nil {
		return sessiontree.Entry{}, err
	}
	if len(es) != 1 {
		return sessiontree.Entry{}, &sessiontree.CorruptError{Reason: "state link to a missing entry"}
	}
	return es[0], nil
}
