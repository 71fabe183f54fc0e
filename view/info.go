package view

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree"
)

// Info is what `sessiontree info` shows about a session. Its JSON has the
// keys of pi's answers where they overlap (id, cwd, name, leafId,
// entryCount); absent values are null, never empty strings.
type Info struct {
	// ID is the session id.
	ID string `json:"id"`
	// Cwd is the session's working directory.
	Cwd string `json:"cwd"`
	// Name is the session name, nil when it has none.
	Name *string `json:"name"`
	// LeafID is the current leaf, nil when it is null.
	LeafID *string `json:"leafId"`
	// EntryCount counts every entry, leaf entries included.
	EntryCount int64 `json:"entryCount"`
	// MessageCount counts message entries, system messages included, as
	// pi's session list does ([sessiontree.ListInfo]).
	MessageCount int64 `json:"messageCount"`
	// FirstMessage is the text of the first user message with text, else
	// [sessiontree.NoMessages], as pi's session list shows it.
	FirstMessage string `json:"firstMessage"`
	// CreatedAt is the header's timestamp.
	CreatedAt string `json:"createdAt"`
	// UpdatedAt is when the session last changed, nil when it has no
	// entry: the last entry's timestamp, or CreatedAt when that is later
	// (a fork's entries are older than it; [sessiontree.LastChange]).
	UpdatedAt *string `json:"updatedAt"`
	// ParentSession is the session this one was forked from, nil if none.
	ParentSession *string `json:"parentSession"`
	// Metadata is the free-form JSON the session was made with (store
	// Create's and `sessiontree new`'s, as [sessiontree.SessionInfo]
	// carries it to a list), nil (null) when none, as for a pi file.
	Metadata json.RawMessage `json:"metadata"`
	// Version is the session format version.
	Version int `json:"version"`
	// Branches counts the tips of the tree: entries nothing was appended
	// under (leaf entries aside). A linear session has one.
	Branches int `json:"branches"`
	// Roots counts entries without a parent (a move to before the first
	// entry starts a new root).
	Roots int `json:"roots"`
	// Compactions counts compaction entries.
	Compactions int `json:"compactions"`
	// Labels counts entries that carry a label now.
	Labels int `json:"labels"`
	// Stats are pi's /session totals: message counts, tokens, cost and
	// the cost breakdown per model.
	Stats sessiontree.Stats `json:"stats"`
}

func ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// LoadInfo gathers a session's [Info]. A [sessiontree.SummaryReader]
// (either database engine) gives its counts from a few rows, whatever the session's
// size; for another storage LoadInfo reads where each entry hangs
// ([sessiontree.LogHeads]) and the log from its first message on until a
// user message with text ([summaryOf]).
func LoadInfo(ctx context.Context, st sessiontree.Storage) (Info, error) {
	meta, err := st.Meta(ctx)
	if err != nil {
		return Info{}, fmt.Errorf("read metadata: %w", err)
	}
	sum, err := summaryOf(ctx, st)
	if err != nil {
		return Info{}, err
	}
	row, err := rowOf(ctx, st)
	if err != nil {
		return Info{}, err
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		return Info{}, fmt.Errorf("read stats: %w", err)
	}
	if sum.UpdatedAt != "" {
		sum.UpdatedAt = sessiontree.LastChange(meta.CreatedAt, sum.UpdatedAt)
	}
	if stats.Breakdown == nil {
		stats.Breakdown = []sessiontree.UsageBucket{} // the JSON shape: an array, never null
	}
	return Info{
		ID: meta.ID, Cwd: meta.Cwd, Name: ptr(row.Name), LeafID: ptr(row.Leaf),
		EntryCount: stats.Entries, MessageCount: sum.List.MessageCount, FirstMessage: sum.List.FirstMessage,
		CreatedAt: meta.CreatedAt, UpdatedAt: ptr(sum.UpdatedAt), ParentSession: ptr(meta.ParentSession),
		Metadata: row.Metadata, Version: meta.Version, Branches: int(sum.Branches), Roots: int(sum.Roots),
		Compactions: int(sum.Compactions), Labels: int(sum.Labels), Stats: stats,
	}, nil
}

// rowOf returns the name, leaf and metadata of st: from its row, one
// read, for an [sessiontree.InfoReader] (a database's session), else its
// name and leaf (a file has no metadata).
func rowOf(ctx context.Context, st sessiontree.Storage) (sessiontree.SessionInfo, error) {
	if r, ok := st.(sessiontree.InfoReader); ok {
		return r.Info(ctx)
	}
	var row sessiontree.SessionInfo
	var err error
	if row.Leaf, err = st.Leaf(ctx); err != nil {
		return row, fmt.Errorf("read leaf: %w", err)
	}
	if row.Name, err = st.Name(ctx); err != nil {
		return row, fmt.Errorf("read name: %w", err)
	}
	return row, nil
}

// summaryOf returns st's [sessiontree.Summary]: through its
// SummaryReader when it has one, else counted over its log's heads, with
// the first message read a page at a time ([firstMessage]).
func summaryOf(ctx context.Context, st sessiontree.Storage) (sessiontree.Summary, error) {
	if r, ok := st.(sessiontree.SummaryReader); ok {
		return r.Summary(ctx)
	}
	heads, err := sessiontree.LogHeads(ctx, st)
	if err != nil {
		return sessiontree.Summary{}, fmt.Errorf("read log heads: %w", err)
	}
	labels, err := st.Labels(ctx)
	if err != nil {
		return sessiontree.Summary{}, fmt.Errorf("read labels: %w", err)
	}
	first, err := firstMessage(ctx, st, heads)
	if err != nil {
		return sessiontree.Summary{}, err
	}
	sum := sessiontree.Summary{Shape: sessiontree.ShapeOf(heads, labels)}
	sum.List = sessiontree.ListInfo{MessageCount: messageCount(heads), FirstMessage: first}
	if n := len(heads); n > 0 {
		sum.UpdatedAt = heads[n-1].Timestamp
	}
	return sum, nil
}

// firstMessagePage is how many entries firstMessage reads at a time: the
// first user message is almost always among the first few.
const firstMessagePage = 64

// firstMessage returns the FirstMessage of [sessiontree.ListInfoOf] over
// the log whose heads are heads, reading the log a page at a time from its
// first message until a user message with text.
func firstMessage(ctx context.Context, st sessiontree.Storage, heads []sessiontree.Entry) (string, error) {
	i := slices.IndexFunc(heads, func(e sessiontree.Entry) bool { return e.Type == sessiontree.TypeMessage })
	if i < 0 {
		return sessiontree.NoMessages, nil
	}
	for after := heads[i].Seq - 1; ; {
		page, err := st.Log(ctx, after, firstMessagePage)
		if err != nil {
			return "", fmt.Errorf("read log after %d: %w", after, err)
		}
		if len(page) == 0 {
			return sessiontree.NoMessages, nil
		}
		for _, e := range page {
			if text, ok := sessiontree.UserText(e); ok {
				return text, nil
			}
		}
		after = page[len(page)-1].Seq
	}
}

// messageCount counts the message entries of a log, as
// [sessiontree.ListInfoOf] does.
func messageCount(log []sessiontree.Entry) int64 {
	n := int64(0)
	for _, e := range log {
		if e.Type == sessiontree.TypeMessage {
			n++
		}
	}
	return n
}

// WriteInfo writes info as aligned "key  value" lines; now dates the
// relative times. The cost breakdown takes one line per bucket, in pi's
// order (highest cost first): its key, cost and tokens.
func WriteInfo(w io.Writer, info Info, now time.Time) error {
	bw := bufio.NewWriter(w)
	orNone := func(p *string) string {
		if p == nil {
			return "(none)"
		}
		return *p
	}
	when := func(ts string) string {
		t, err := sessiontree.ParseTime(ts)
		if err != nil {
			return ts
		}
		return ts + " (" + RelativeTime(t, now) + ")"
	}
	s := info.Stats
	rows := [][2]string{
		{"session", info.ID},
		{"name", orNone(info.Name)},
		{"cwd", info.Cwd},
		{"created", when(info.CreatedAt)},
	}
	if info.UpdatedAt != nil {
		rows = append(rows, [2]string{"updated", when(*info.UpdatedAt)})
	}
	rows = append(rows,
		[2]string{"parent", orNone(info.ParentSession)},
	)
	if info.Metadata != nil {
		rows = append(rows, [2]string{"metadata", compactJSON(info.Metadata)})
	}
	rows = append(rows,
		[2]string{"leaf", orNone(info.LeafID)},
		[2]string{"entries", fmt.Sprintf("%s (%s)", Count(info.EntryCount), plural(int(info.MessageCount), "message"))},
		[2]string{"branches", fmt.Sprintf("%d (%s)", info.Branches, plural(info.Roots, "root"))},
		[2]string{"compactions", strconv.Itoa(info.Compactions)},
		[2]string{"labels", strconv.Itoa(info.Labels)},
		[2]string{"tokens", fmt.Sprintf("%s total: %s input, %s output, %s cache read, %s cache write",
			Count(s.Tokens.Total), Count(s.Tokens.Input), Count(s.Tokens.Output), Count(s.Tokens.CacheRead), Count(s.Tokens.CacheWrite))},
		[2]string{"cost", fmt.Sprintf("$%.4f", s.Cost)},
	)
	for _, r := range rows {
		fmt.Fprintf(bw, "%-12s %s\n", r[0], OneLine(r[1]))
	}
	// Aligned already, each key folded onto one line: OneLine would
	// squeeze the padding.
	for i, line := range breakdownLines(s.Breakdown) {
		key := ""
		if i == 0 {
			key = "breakdown"
		}
		fmt.Fprintf(bw, "%-12s %s\n", key, line)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write info: %w", err)
	}
	return nil
}

// breakdownLines formats the cost breakdown as aligned columns, one line
// per bucket: key, cost, tokens; "(none)" when there is no bucket.
func breakdownLines(buckets []sessiontree.UsageBucket) []string {
	if len(buckets) == 0 {
		return []string{"(none)"}
	}
	keys := make([]string, len(buckets))
	costs := make([]string, len(buckets))
	tokens := make([]string, len(buckets))
	var keyW, costW, tokW int
	for i, b := range buckets {
		keys[i] = OneLine(b.Key)
		costs[i] = fmt.Sprintf("$%.4f", b.Cost)
		tokens[i] = Count(b.Tokens)
		keyW = max(keyW, StringWidth(keys[i]))
		costW = max(costW, len(costs[i]))
		tokW = max(tokW, len(tokens[i]))
	}
	lines := make([]string, len(buckets))
	for i := range buckets {
		lines[i] = PadRight(keys[i], keyW) + "  " + PadLeft(costs[i], costW) + "  " + PadLeft(tokens[i], tokW) + " tokens"
	}
	return lines
}

// Count formats n with thousands separators: 1,234,567.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
