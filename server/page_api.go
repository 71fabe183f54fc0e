package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/view"
)

// The routes the web page needs beyond the command's: a session's tree a
// window of rows at a time, and one entry. They have no command of their
// own, so their shapes are the page's.

// Graph windows: how many rows one request may ask for, and how many it
// gets when it does not say.
const (
	defaultGraphRows = 200
	maxGraphRows     = 2000
)

// graphCacheSize is how many sessions' graphs a server keeps: building one
// reads the whole tree's shape (about 0.2 s for 100,000 entries), and a
// person looks at a few sessions at a time.
const graphCacheSize = 4

// graphAnswer is the body of GET /api/sessions/{id}/graph.
type graphAnswer struct {
	// Total is the number of rows of the whole graph as laid out.
	Total int `json:"total"`
	// Lanes is the number of lanes of the whole graph.
	Lanes int `json:"lanes"`
	// Offset is the row number of Rows[0].
	Offset int `json:"offset"`
	// Rows are the rows of the window, described.
	Rows []view.GraphRow `json:"rows"`
	// Edges are the edges that cross the window, each [parent row,
	// parent lane, child row, child lane].
	Edges [][4]int `json:"edges"`
	// Expand are the ids of the folds expanded, with the one that held
	// the focus.
	Expand []string `json:"expand"`
	// FocusRow is the row of the focus entry, -1 without one.
	FocusRow int `json:"focusRow"`
}

// graphQuery is what GET /api/sessions/{id}/graph asks for.
type graphQuery struct {
	offset, limit int64
	expand        map[string]bool // ids of the folds to expand
	focus         string          // the entry ?focus= resolves to (graph sets it), "" when absent
}

// readGraphQuery reads ?offset=&limit=&expand=ID,ID; ?focus= is resolved
// against the session, by graph.
func readGraphQuery(r *http.Request) (graphQuery, error) {
	q := graphQuery{expand: map[string]bool{}}
	var err error
	if q.offset, err = intParam(r, "offset", 0); err != nil {
		return q, err
	}
	if q.limit, err = intParam(r, "limit", defaultGraphRows); err != nil {
		return q, err
	}
	if q.limit == 0 || q.limit > maxGraphRows {
		return q, fmt.Errorf("limit=%d: want 1 to %d: %w", q.limit, maxGraphRows, ErrBadRequest)
	}
	expand, _ := param(r, "expand")
	for _, id := range strings.Split(expand, ",") {
		if id != "" {
			q.expand[id] = true
		}
	}
	return q, nil
}

// graph answers a window of the session's tree laid out as rows (see
// graphQuery). With a focus, the fold that hides the entry is expanded and
// the window is centred on it.
func (srv *Server) graph(w http.ResponseWriter, r *http.Request) error {
	q, err := readGraphQuery(r)
	if err != nil {
		return err
	}
	return srv.withSession(r, func(st sessiontree.DatabaseSession) error {
		if q.focus, err = entryParam(r.Context(), r, st, "focus"); err != nil {
			return err
		}
		g, err := srv.graphs.get(r.Context(), st)
		if err != nil {
			return err
		}
		ans, err := graphWindow(r.Context(), st, g, q)
		if err != nil {
			return err
		}
		return respond(w, http.StatusOK, jsonOf(ans))
	})
}

// graphWindow lays g out with the folds q expands and answers the window
// q asks for, its rows described from st.
func graphWindow(ctx context.Context, st sessiontree.Storage, g *view.Graph, q graphQuery) (graphAnswer, error) {
	rows := g.Rows(q.expand)
	if fold, ok := g.FoldOf(q.focus, rows); ok {
		q.expand[fold] = true
		rows = g.Rows(q.expand)
	}
	// Expand is an array even when empty, as the document says.
	ans := graphAnswer{Total: len(rows), FocusRow: -1, Expand: slices.AppendSeq([]string{}, maps.Keys(q.expand))}
	slices.Sort(ans.Expand)
	offset := q.offset
	if q.focus != "" {
		ans.FocusRow = slices.IndexFunc(rows, func(r view.GraphRow) bool { return r.ID == q.focus && r.Type != view.FoldType })
		if ans.FocusRow >= 0 {
			offset = int64(max(0, ans.FocusRow-int(q.limit)/2))
		}
	}
	ans.Offset = int(min(offset, int64(len(rows))))
	end := int(min(int64(ans.Offset)+q.limit, int64(len(rows))))
	ans.Rows = slices.Clone(rows[ans.Offset:end])
	if err := view.Describe(ctx, st, ans.Rows); err != nil {
		return ans, err
	}
	ans.Lanes, ans.Edges = graphEdges(rows, ans.Offset, end)
	return ans, nil
}

// graphEdges returns the number of lanes of rows and the edges, parent to
// child, that cross the rows [start, end): those with the parent above end
// and the child at or below start.
func graphEdges(rows []view.GraphRow, start, end int) (int, [][4]int) {
	lanes := 0
	edges := [][4]int{}
	for i, r := range rows {
		lanes = max(lanes, r.Lane+1)
		if i >= start && r.Parent >= 0 && r.Parent < end {
			p := rows[r.Parent]
			edges = append(edges, [4]int{r.Parent, p.Lane, i, r.Lane})
		}
	}
	return lanes, edges
}

// entryAnswer is the body of GET /api/sessions/{id}/entries/{entry}.
type entryAnswer struct {
	// Entry is the entry as stored.
	Entry json.RawMessage `json:"entry"`
	// Label is its current label, "" when none.
	Label string `json:"label"`
	// Leaf is set when the entry is the session's leaf.
	Leaf bool `json:"leaf"`
}

// entry answers one entry by id (or unique prefix), with its label.
func (srv *Server) entry(w http.ResponseWriter, r *http.Request) error {
	return srv.withSession(r, func(st sessiontree.DatabaseSession) error {
		id, err := resolveEntry(r.Context(), st, r.PathValue("entry"), false)
		if err != nil {
			return err
		}
		e, err := st.Entry(r.Context(), id)
		if err != nil {
			return err
		}
		ans := entryAnswer{Entry: e.Raw}
		if ans.Label, err = st.Label(r.Context(), id); err != nil {
			return err
		}
		leaf, err := st.Leaf(r.Context())
		if err != nil {
			return err
		}
		ans.Leaf = leaf == id
		return respond(w, http.StatusOK, jsonOf(ans))
	})
}

// graphCache keeps the graphs of the sessions looked at last. Every
// change to a session (an entry, a label, a move of the leaf, a context
// edit) appends to its log, so one indexed look past the last entry a graph
// has tells whether it is current; a graph a few entries behind is
// extended with them ([view.Graph.Extend]) rather than built anew. The zero
// value is ready to use; it is safe for concurrent use.
type graphCache struct {
	mu    sync.Mutex // guards items
	items []cachedGraph
}

type cachedGraph struct {
	session string
	lastSeq int64  // the last entry the graph has, 0 for none
	lastID  string // its id: a session deleted and made again under the same id has another
	graph   *view.Graph
}

// extendLimit is how many new entries a kept graph is extended with;
// beyond it, building anew reads little more.
const extendLimit = 10_000

// get returns the graph of st as its log is now.
func (c *graphCache) get(ctx context.Context, st sessiontree.DatabaseSession) (*view.Graph, error) {
	if it, ok := c.kept(st.ID()); ok {
		newer, same, err := appendedSince(ctx, st, it)
		if err != nil {
			return nil, err
		}
		if same && len(newer) == 0 {
			return it.graph, nil
		}
		if same && len(newer) <= extendLimit {
			g, ok, err := extend(ctx, st, it.graph, newer)
			if err != nil {
				return nil, err
			}
			if ok {
				last := newer[len(newer)-1]
				c.put(cachedGraph{session: st.ID(), lastSeq: last.Seq, lastID: last.ID, graph: g})
				return g, nil
			}
		}
	}
	return c.build(ctx, st)
}

// appendedSince returns the entries appended to st after the last one
// the kept graph has (up to extendLimit+1 of them), and whether st is
// still the session the graph was built from: its entry at that seq is
// the same one.
func appendedSince(ctx context.Context, st sessiontree.DatabaseSession, it cachedGraph) ([]sessiontree.Entry, bool, error) {
	if it.lastSeq == 0 {
		newer, err := st.Log(ctx, 0, extendLimit+1)
		return newer, true, err
	}
	log, err := st.Log(ctx, it.lastSeq-1, extendLimit+2)
	if err != nil {
		return nil, false, err
	}
	if len(log) == 0 || log[0].Seq != it.lastSeq || log[0].ID != it.lastID {
		return nil, false, nil
	}
	return log[1:], true, nil
}

// build builds the graph of st anew and keeps it.
func (c *graphCache) build(ctx context.Context, st sessiontree.DatabaseSession) (*view.Graph, error) {
	g, last, err := view.LoadGraph(ctx, st)
	if err != nil {
		return nil, err
	}
	it := cachedGraph{session: st.ID(), lastSeq: last, graph: g}
	if last > 0 {
		e, err := st.Log(ctx, last-1, 1)
		if err != nil {
			return nil, err
		}
		if len(e) == 0 || e[0].Seq != last {
			return g, nil // the session changed meanwhile: answer it, keep nothing
		}
		it.lastID = e[0].ID
	}
	c.put(it)
	return g, nil
}

// extend extends g with the entries newer appended to st, reading the
// labels and the leaf they leave.
func extend(ctx context.Context, st sessiontree.DatabaseSession, g *view.Graph, newer []sessiontree.Entry) (*view.Graph, bool, error) {
	labels, err := st.Labels(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("read labels: %w", err)
	}
	leaf, err := st.Leaf(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("read leaf: %w", err)
	}
	g2, ok := g.Extend(newer, labels, leaf)
	return g2, ok, nil
}

// kept returns the kept graph of a session.
func (c *graphCache) kept(session string) (cachedGraph, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.items, func(it cachedGraph) bool { return it.session == session })
	if i < 0 {
		return cachedGraph{}, false
	}
	return c.items[i], true
}

// put keeps g as the newest, dropping the oldest beyond graphCacheSize.
func (c *graphCache) put(g cachedGraph) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items = slices.DeleteFunc(c.items, func(it cachedGraph) bool { return it.session == g.session })
	c.items = append(c.items, g)
	if len(c.items) > graphCacheSize {
		c.items = slices.Delete(c.items, 0, len(c.items)-graphCacheSize)
	}
}
