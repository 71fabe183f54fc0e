package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
)

// Shape is the kind of session a generator makes.
type Shape string

// The session shapes the benchmarks run on.
const (
	// ShapeLinear is one long conversation, never branched or compacted.
	ShapeLinear Shape = "linear"
	// ShapeCompacted is a linear conversation compacted every ~1,000
	// entries, each compaction keeping the last ~200 entries. The newest
	// compaction sits 300 entries before the end at every size, so the
	// context at the leaf is the same length (~500 entries) whatever the
	// session's size.
	ShapeCompacted Shape = "compacted"
	// ShapeBushy branches often from earlier points (as a user does who
	// goes back to retry), most branches starting with a branch summary.
	// About half of all entries end up on the active path.
	ShapeBushy Shape = "bushy"
	// ShapeLarge is a linear conversation where about one entry in 50
	// carries a base64 image or a tool result of 100 KB to 1 MB.
	ShapeLarge Shape = "large"
	// ShapeImages is both: compacted as ShapeCompacted, with the large
	// payloads of ShapeLarge. It is the long-lived session of inline
	// images of issue 17 item 4 (60k entries make about 600 MiB, more than the 450 MB), whose
	// resume reads only what follows the newest compaction; the
	// whole-process mode alone uses it (-process-shape images).
	ShapeImages Shape = "images"
)

// Shapes lists every shape of the workloads in the order reports show
// them.
var Shapes = []Shape{ShapeLinear, ShapeCompacted, ShapeBushy, ShapeLarge}

// compacted reports whether sessions of shape s are compacted.
func (s Shape) compacted() bool { return s == ShapeCompacted || s == ShapeImages }

// largePayloads reports whether sessions of shape s carry large payloads.
func (s Shape) largePayloads() bool { return s == ShapeLarge || s == ShapeImages }

const (
	compactionEvery  = 1000 // entries between compactions
	compactionKeep   = 200  // entries a compaction keeps before it
	compactionTail   = 300  // entries after the newest compaction
	largeEvery       = 50   // one large payload per this many entries
	largeMin         = 100 << 10
	largeMax         = 1 << 20
	appendPoolSize   = 512 // drafts generated for the append workloads
	oldEntrySamples  = 16  // random old entries for the path workload
	benchCwd         = "/home/dev/projects/sessiontree-bench"
	benchEpochMillis = 1767603600000 // 2026-01-05T09:00:00Z
)

// dataset is one generated session: its entries, its pi JSONL file and
// the facts the workloads need, computed once.
type dataset struct {
	Shape Shape
	Size  int
	Seed  uint64
	Meta  sessiontree.SessionMeta
	// Entries are the session's entries in append order, Seq set.
	Entries []sessiontree.Entry
	// File is the pi JSONL version-3 file holding the session.
	File string
	// FileBytes is the file's size.
	FileBytes int64
	// PayloadBytes is the sum of the entries' JSON sizes.
	PayloadBytes int64

	// Leaf is the leaf after loading (the last entry: pi writes no leaf
	// entries, so the files carry none).
	Leaf string
	// Depth maps an entry id to its depth (root = 1).
	Depth map[string]int
	// ActivePath is the path from the leaf to the compaction boundary,
	// root first, as the backends must return it.
	ActivePath []sessiontree.Entry
	// ContextMessages is how many messages the context at the leaf has.
	ContextMessages int
	// OldEntries are random entries for the path-from-an-old-entry
	// workload, with their path lengths.
	OldEntries []string
	OldPathLen []int
	// MoveTarget is the tip of an abandoned branch (bushy shape only)
	// whose path meets the leaf's about halfway down; MoveMeet is the
	// entry where the two paths meet.
	MoveTarget, MoveMeet string
	// Appends are drafts of realistic entries for the append workloads.
	Appends []sessiontree.Draft

	// mem is the session loaded in the memory backend by the reference
	// pass, handed to the memory backend (or dropped) afterwards.
	mem *memory.Storage
}

// name is the dataset's short name, e.g. "compacted-10k".
func (ds *dataset) name() string { return fmt.Sprintf("%s-%s", ds.Shape, sizeLabel(ds.Size)) }

// sizeLabel prints 1000 as 1k, 1000000 as 1M.
func sizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// generator makes the entries of one session from a seeded random source.
type generator struct {
	rng    *rand.Rand
	shape  Shape
	now    int64 // current time, Unix ms
	ids    map[string]bool
	models []model
	model  int
	// plant, when set, is put in the next user message's text (the
	// corpus's search target).
	plant string
	// convo is where the conversation is, kept here so the append
	// drafts continue the session's conversation.
	convo struct {
		next    turn
		pending []toolCall
	}
	// textPool and blobPool back the large payloads: slices of them are
	// taken rather than generating a megabyte of text each time.
	textPool string
	blobPool string
}

type model struct{ api, provider, id string }

var models = []model{
	{"anthropic-messages", "anthropic", "claude-sonnet-4-5"},
	{"openai-responses", "openai", "gpt-5"},
	{"google-generative-ai", "google", "gemini-2.5-pro"},
}

// seedFor derives a dataset's seed from the run's seed, its shape and size,
// so each dataset is the same whatever else a run generates.
func seedFor(seed uint64, shape Shape, size int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", seed, shape, size)
	return h.Sum64()
}

func newGenerator(seed uint64, shape Shape) *generator {
	g := &generator{
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		shape:  shape,
		now:    benchEpochMillis,
		ids:    map[string]bool{},
		models: models,
	}
	if shape.largePayloads() {
		g.textPool = g.text(largeMax + 1024)
		raw := make([]byte, (largeMax*3/4+3)&^7)
		for i := 0; i < len(raw); i += 8 {
			binary.LittleEndian.PutUint64(raw[i:], g.rng.Uint64())
		}
		g.blobPool = base64.StdEncoding.EncodeToString(raw)
	}
	return g
}

// generate makes a dataset of size entries and writes its JSONL file into
// dir (pi's layout: dir/--<cwd>--/<time>_<id>.jsonl).
func generate(seed uint64, shape Shape, size int, dir string) (*dataset, error) {
	ds := &dataset{Shape: shape, Size: size, Seed: seedFor(seed, shape, size)}
	g := newGenerator(ds.Seed, shape)
	ds.Meta = sessiontree.SessionMeta{
		ID: g.uuidV7(), Version: 3, CreatedAt: g.iso(), Cwd: benchCwd,
	}
	if err := g.fill(ds); err != nil {
		return nil, err
	}
	g.pickOldEntries(ds)
	if shape == ShapeBushy {
		pickMove(ds)
	}
	for range appendPoolSize {
		ds.Appends = append(ds.Appends, g.nextDraft())
	}
	if err := ds.writeFile(dir); err != nil {
		return nil, err
	}
	return ds, nil
}

// fill generates the entries, following the shape's rules.
func (g *generator) fill(ds *dataset) error {
	// path holds the ids of the current branch, root first.
	path := make([]string, 0, ds.Size)
	ds.Depth = make(map[string]int, ds.Size)
	ds.Entries = make([]sessiontree.Entry, 0, ds.Size)
	add := func(d sessiontree.Draft, parent string) (sessiontree.Entry, error) {
		e := composeEntry(d, g.newID(), parent)
		e.Seq = int64(len(ds.Entries) + 1)
		ds.Entries = append(ds.Entries, e)
		ds.PayloadBytes += int64(len(e.Raw))
		ds.Depth[e.ID] = ds.Depth[parent] + 1
		return e, nil
	}
	parentOf := func() string {
		if len(path) == 0 {
			return ""
		}
		return path[len(path)-1]
	}
	nextCompaction := compactionPositions(ds)
	nextBranch := 30 + g.rng.IntN(60)
	for len(ds.Entries) < ds.Size {
		pos := len(ds.Entries) + 1 // 1-based position of the next entry
		var d sessiontree.Draft
		switch {
		case len(nextCompaction) > 0 && pos == nextCompaction[0]:
			nextCompaction = nextCompaction[1:]
			keep := path[max(0, len(path)-keepFor(ds.Size))]
			d = g.compaction(keep)
		case ds.Shape == ShapeBushy && pos >= nextBranch && len(path) > 4:
			nextBranch = pos + 30 + g.rng.IntN(60)
			back := 2 + g.rng.IntN(28)
			if g.rng.IntN(100) < 15 {
				back = 30 + g.rng.IntN(170)
			}
			target := max(0, len(path)-1-back)
			path = path[:target+1]
			if g.rng.IntN(100) < 70 {
				d = g.branchSummary(path[target])
			} else {
				d = g.nextDraft()
			}
		case pos > 10 && g.rng.IntN(400) == 0:
			d = g.label(path[g.rng.IntN(len(path))])
		default:
			d = g.nextDraft()
		}
		e, err := add(d, parentOf())
		if err != nil {
			return err
		}
		path = append(path, e.ID)
	}
	ds.Leaf = parentOf()
	return nil
}

// composeEntry writes an entry the way sessiontree.BuildEntry does (type,
// id, parentId, timestamp, then the fields), without re-scanning fields
// the generator made itself; the reference pass and every backend check
// them when the session loads.
func composeEntry(d sessiontree.Draft, id, parent string) sessiontree.Entry {
	raw := make([]byte, 0, len(d.Fields)+100)
	raw = append(raw, `{"type":"`...)
	raw = append(raw, d.Type...)
	raw = append(raw, `","id":"`...)
	raw = append(raw, id...)
	if parent == "" {
		raw = append(raw, `","parentId":null,"timestamp":"`...)
	} else {
		raw = append(raw, `","parentId":"`...)
		raw = append(raw, parent...)
		raw = append(raw, `","timestamp":"`...)
	}
	raw = append(raw, d.Timestamp...)
	raw = append(raw, '"')
	if len(d.Fields) > 2 {
		raw = append(raw, ',')
		raw = append(raw, d.Fields[1:]...)
	} else {
		raw = append(raw, '}')
	}
	return sessiontree.Entry{Type: d.Type, ID: id, ParentID: parent, Timestamp: d.Timestamp, Raw: raw}
}

// compactionPositions returns the 1-based positions of the compactions of
// a compacted session, oldest first: the newest compactionTail entries
// before the end, then every ~compactionEvery entries back.
func compactionPositions(ds *dataset) []int {
	if !ds.Shape.compacted() {
		return nil
	}
	var out []int
	tail := min(compactionTail, ds.Size*3/10)
	for p := ds.Size - tail; p > keepFor(ds.Size)+1; p -= compactionEvery {
		out = append([]int{p}, out...)
	}
	return out
}

// keepFor is how many entries a compaction keeps: compactionKeep, scaled
// down for sessions too small to hold it (the smoke test's).
func keepFor(size int) int { return min(compactionKeep, size/5) }

// pickOldEntries chooses the entries for the path-from-an-old-entry
// workload: uniformly over the oldest 90% of the log.
func (g *generator) pickOldEntries(ds *dataset) {
	n := max(1, len(ds.Entries)*9/10)
	for range oldEntrySamples {
		ds.OldEntries = append(ds.OldEntries, ds.Entries[g.rng.IntN(n)].ID)
	}
}

// pickMove finds, among the tips of abandoned branches, the one whose path
// meets the leaf's deepest while itself reaching deep below the meeting
// point: it maximises min(meet depth, tip depth - meet depth), as in the
// engine issue's "two 10,000-deep branches that meet 5,000 deep".
func pickMove(ds *dataset) {
	byID := make(map[string]sessiontree.Entry, len(ds.Entries))
	hasChild := make(map[string]bool, len(ds.Entries))
	for _, e := range ds.Entries {
		byID[e.ID] = e
		hasChild[e.ParentID] = true
	}
	onPath := map[string]bool{}
	for id := ds.Leaf; id != ""; id = byID[id].ParentID {
		onPath[id] = true
	}
	// meet[id] is the nearest ancestor-or-self of id on the active path;
	// parents come before children in the log, so one pass computes it.
	meet := make(map[string]string, len(ds.Entries))
	for _, e := range ds.Entries {
		if onPath[e.ID] {
			meet[e.ID] = e.ID
		} else {
			meet[e.ID] = meet[e.ParentID]
		}
	}
	best := -1
	for _, e := range ds.Entries {
		if hasChild[e.ID] || onPath[e.ID] || meet[e.ID] == "" {
			continue
		}
		m := ds.Depth[meet[e.ID]]
		score := min(m, ds.Depth[e.ID]-m)
		if score > best {
			best, ds.MoveTarget, ds.MoveMeet = score, e.ID, meet[e.ID]
		}
	}
}

// writeFile writes the session as a pi JSONL version-3 file.
func (ds *dataset) writeFile(dir string) error {
	sub := filepath.Join(dir, "--"+strings.ReplaceAll(strings.Trim(ds.Meta.Cwd, "/"), "/", "-")+"--")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return err
	}
	stamp := strings.NewReplacer(":", "-", ".", "-").Replace(ds.Meta.CreatedAt)
	ds.File = filepath.Join(sub, fmt.Sprintf("%s_%s.jsonl", stamp, ds.Meta.ID))
	f, err := os.Create(ds.File)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	header, err := json.Marshal(struct {
		Type string `json:"type"`
		sessiontree.SessionMeta
	}{"session", ds.Meta})
	if err != nil {
		f.Close()
		return err
	}
	w.Write(header)
	w.WriteByte('\n')
	for _, e := range ds.Entries {
		w.Write(e.Raw)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", ds.File, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	ds.FileBytes = st.Size()
	return f.Close()
}

// ---- entries ----

// tick advances the clock by a realistic gap and returns the time.
func (g *generator) tick() int64 {
	g.now += 300 + int64(g.rng.ExpFloat64()*4000)
	return g.now
}

func (g *generator) iso() string {
	return sessiontree.FormatTime(time.UnixMilli(g.now))
}

func (g *generator) newID() string {
	for {
		id := fmt.Sprintf("%08x", g.rng.Uint32())
		if !g.ids[id] {
			g.ids[id] = true
			return id
		}
	}
}

func (g *generator) uuidV7() string {
	var b [16]byte
	ms := uint64(g.now)
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	r1, r2 := g.rng.Uint64(), g.rng.Uint64()
	for i := 6; i < 16; i++ {
		if i < 11 {
			b[i] = byte(r1 >> (8 * (i - 6)))
		} else {
			b[i] = byte(r2 >> (8 * (i - 11)))
		}
	}
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// convo state: what the next message of the conversation is.
type turn int

const (
	turnUser turn = iota
	turnAssistant
	turnToolResults
)

// toolCall is a tool call waiting for its result.
type toolCall struct{ id, name string }

// nextDraft makes the next entry of the conversation: mostly messages,
// now and then a model, thinking-level or tools change, a custom entry, a
// custom message or a session name.
func (g *generator) nextDraft() sessiontree.Draft {
	g.tick()
	switch r := g.rng.IntN(1000); {
	case r < 3:
		g.model = g.rng.IntN(len(g.models))
		m := g.models[g.model]
		return g.draft(sessiontree.TypeModelChange, "provider", m.provider, "modelId", m.id)
	case r < 5:
		return g.draft(sessiontree.TypeThinkingLevelChange, "thinkingLevel", []string{"off", "low", "medium", "high"}[g.rng.IntN(4)])
	case r < 6:
		return g.draft(sessiontree.TypeActiveToolsChange, "activeToolNames", []string{"read", "bash", "edit", "write"}[:1+g.rng.IntN(4)])
	case r < 9:
		return g.draft(sessiontree.TypeCustom, "customType", "todo", "data", map[string]any{"items": g.words(3 + g.rng.IntN(8)), "done": g.rng.IntN(5)})
	case r < 11:
		return g.draft(sessiontree.TypeCustomMessage, "customType", "reminder", "content", g.text(40+g.rng.IntN(200)), "display", true)
	case r < 12:
		return g.draft(sessiontree.TypeSessionInfo, "name", g.text(10+g.rng.IntN(30)))
	}
	return g.message()
}

// The conversation cycles user → assistant (→ tool results → assistant)*.
func (g *generator) message() sessiontree.Draft {
	var msg any
	switch g.convo.next {
	case turnUser:
		msg = g.userMessage()
		g.convo.next = turnAssistant
	case turnAssistant:
		var calls []toolCall
		msg, calls = g.assistantMessage()
		if len(calls) > 0 {
			g.convo.pending = calls
			g.convo.next = turnToolResults
		} else {
			g.convo.next = turnUser
		}
	case turnToolResults:
		c := g.convo.pending[0]
		g.convo.pending = g.convo.pending[1:]
		msg = g.toolResult(c)
		if len(g.convo.pending) == 0 {
			g.convo.next = turnAssistant
		}
	}
	return g.draft(sessiontree.TypeMessage, "message", msg)
}

// draft makes a draft of fields given as name/value pairs, marshalled as
// JavaScript's JSON.stringify does (no HTML escaping of <, > and &), so the
// files look like the ones pi writes.
func (g *generator) draft(t sessiontree.EntryType, pairs ...any) sessiontree.Draft {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	out := []byte{'{'}
	for i := 0; i < len(pairs); i += 2 {
		buf.Reset()
		if err := enc.Encode(pairs[i+1]); err != nil {
			panic(err) // the generator only passes marshalable values
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, pairs[i].(string))
		out = append(out, ':')
		out = append(out, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
	}
	out = append(out, '}')
	return sessiontree.Draft{Type: t, Timestamp: g.iso(), Fields: out}
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type imageBlock struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

type userMsg struct {
	Role      string `json:"role"`
	Content   any    `json:"content"`
	Timestamp int64  `json:"timestamp"`
}

func (g *generator) large() bool {
	return g.shape.largePayloads() && g.rng.IntN(largeEvery/2) == 0
}

// largeSize is log-uniform between largeMin and largeMax.
func (g *generator) largeSize() int {
	return int(math.Exp(math.Log(largeMin) + g.rng.Float64()*(math.Log(largeMax)-math.Log(largeMin))))
}

func (g *generator) userMessage() userMsg {
	m := userMsg{Role: "user", Timestamp: g.now}
	text := g.text(10 + int(g.rng.ExpFloat64()*60))
	if g.plant != "" {
		text = "why does " + g.plant + " keep failing? " + text
		g.plant = ""
	}
	if g.large() {
		n := g.largeSize() &^ 3
		m.Content = []any{textBlock{"text", text}, imageBlock{"image", g.blobPool[:n], "image/png"}}
	} else {
		m.Content = text
	}
	return m
}

type usage struct {
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	CacheRead   int64 `json:"cacheRead"`
	CacheWrite  int64 `json:"cacheWrite"`
	TotalTokens int64 `json:"totalTokens"`
	Cost        struct {
		Input      float64 `json:"input"`
		Output     float64 `json:"output"`
		CacheRead  float64 `json:"cacheRead"`
		CacheWrite float64 `json:"cacheWrite"`
		Total      float64 `json:"total"`
	} `json:"cost"`
}

type assistantMsg struct {
	Role       string `json:"role"`
	Content    []any  `json:"content"`
	API        string `json:"api"`
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	Usage      usage  `json:"usage"`
	StopReason string `json:"stopReason"`
	Timestamp  int64  `json:"timestamp"`
}

type thinkingBlock struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

type toolCallBlock struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

func (g *generator) assistantMessage() (assistantMsg, []toolCall) {
	m := g.models[g.model]
	a := assistantMsg{Role: "assistant", API: m.api, Provider: m.provider, Model: m.id, Timestamp: g.now}
	if g.rng.IntN(4) == 0 {
		a.Content = append(a.Content, thinkingBlock{"thinking", g.text(20 + int(g.rng.ExpFloat64()*80))})
	}
	a.Content = append(a.Content, textBlock{"text", g.text(10 + int(g.rng.ExpFloat64()*60))})
	var calls []toolCall
	// Two assistant turns in three call tools; a few call several.
	if g.rng.IntN(3) > 0 {
		for range 1 + g.rng.IntN(3)/2 {
			c := toolCall{id: fmt.Sprintf("toolu_%012x", g.rng.Uint64()>>16), name: []string{"read", "bash", "edit", "write", "read", "bash"}[g.rng.IntN(6)]}
			a.Content = append(a.Content, toolCallBlock{"toolCall", c.id, c.name, g.toolArgs(c.name)})
			calls = append(calls, c)
		}
		a.StopReason = "toolUse"
	} else {
		a.StopReason = "stop"
	}
	u := &a.Usage
	u.Input = 50 + g.rng.Int64N(3000)
	u.Output = 20 + g.rng.Int64N(1500)
	u.CacheRead = g.rng.Int64N(60000)
	u.CacheWrite = g.rng.Int64N(2000)
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	micro := func(x float64) float64 { return math.Round(x*1e6) / 1e6 }
	u.Cost.Input = micro(float64(u.Input) * 3e-6)
	u.Cost.Output = micro(float64(u.Output) * 15e-6)
	u.Cost.CacheRead = micro(float64(u.CacheRead) * 0.3e-6)
	u.Cost.CacheWrite = micro(float64(u.CacheWrite) * 3.75e-6)
	u.Cost.Total = micro(u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite)
	return a, calls
}

var srcFiles = []string{"cmd/server/main.go", "internal/store/store.go", "internal/store/store_test.go",
	"README.md", "pkg/api/handler.go", "web/src/App.tsx", "Makefile", "go.mod", "docs/design.md"}

func (g *generator) toolArgs(name string) map[string]any {
	path := "/home/dev/projects/sessiontree-bench/" + srcFiles[g.rng.IntN(len(srcFiles))]
	switch name {
	case "bash":
		return map[string]any{"command": []string{"go test ./...", "git status", "ls -la", "rg -n TODO", "go vet ./..."}[g.rng.IntN(5)], "timeout": 120}
	case "edit":
		return map[string]any{"path": path, "oldText": g.text(10 + g.rng.IntN(60)), "newText": g.text(10 + g.rng.IntN(80))}
	case "write":
		return map[string]any{"path": path, "content": g.text(40 + g.rng.IntN(200))}
	}
	return map[string]any{"path": path}
}

type toolResultMsg struct {
	Role       string `json:"role"`
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Content    []any  `json:"content"`
	IsError    bool   `json:"isError"`
	Timestamp  int64  `json:"timestamp"`
}

func (g *generator) toolResult(c toolCall) toolResultMsg {
	m := toolResultMsg{Role: "toolResult", ToolCallID: c.id, ToolName: c.name, IsError: g.rng.IntN(12) == 0, Timestamp: g.now}
	switch {
	case g.large() && c.name == "read" && g.rng.IntN(2) == 0:
		n := g.largeSize() &^ 3
		m.Content = []any{textBlock{"text", "Read image file [image/png]"}, imageBlock{"image", g.blobPool[:n], "image/png"}}
	case g.large():
		n := g.largeSize()
		start := g.rng.IntN(len(g.textPool) - n)
		m.Content = []any{textBlock{"text", g.textPool[start : start+n]}}
	default:
		m.Content = []any{textBlock{"text", g.text(10 + int(g.rng.ExpFloat64()*100))}}
	}
	return m
}

type compactionDetails struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
}

func (g *generator) compaction(firstKept string) sessiontree.Draft {
	g.tick()
	return g.draft(sessiontree.TypeCompaction,
		"summary", "## Goal\n"+g.text(200+g.rng.IntN(600))+"\n## Progress\n"+g.text(200+g.rng.IntN(800)),
		"firstKeptEntryId", firstKept,
		"tokensBefore", 80000+g.rng.IntN(100000),
		"details", compactionDetails{g.pickFiles(), g.pickFiles()},
		"fromHook", false)
}

func (g *generator) branchSummary(from string) sessiontree.Draft {
	g.tick()
	return g.draft(sessiontree.TypeBranchSummary,
		"fromId", from,
		"summary", "The abandoned branch tried: "+g.text(80+g.rng.IntN(300)),
		"details", compactionDetails{g.pickFiles(), g.pickFiles()},
		"fromHook", false)
}

func (g *generator) label(target string) sessiontree.Draft {
	g.tick()
	return g.draft(sessiontree.TypeLabel, "targetId", target, "label", g.words(1 + g.rng.IntN(3))[0])
}

func (g *generator) pickFiles() []string {
	out := []string{}
	for range g.rng.IntN(4) {
		out = append(out, srcFiles[g.rng.IntN(len(srcFiles))])
	}
	return out
}

// vocabulary mixes code, prose, punctuation that JSON must escape, and
// non-ASCII text, so encoders and decoders do realistic work.
var vocabulary = strings.Fields(`the a to of and in is it that for on with this
function return error value session entry parent leaf branch context model tool
read write edit bash test build go func struct interface map slice string int
nil err ctx if else for range defer go.mod SQLite WAL index query SELECT FROM
WHERE JOIN CTE recursive compaction summary token usage cost path file line
"quoted" back\slash {braces} [brackets] <tag> a&b 日本語 テスト römisch café
naïve emoji🙂 ok done fixed failing passes TODO FIXME – — … `)

func (g *generator) words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = vocabulary[g.rng.IntN(len(vocabulary))]
	}
	return out
}

// text makes about n bytes of text, with a line break now and then.
func (g *generator) text(n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for b.Len() < n {
		if b.Len() > 0 {
			if g.rng.IntN(12) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(vocabulary[g.rng.IntN(len(vocabulary))])
	}
	return b.String()
}
