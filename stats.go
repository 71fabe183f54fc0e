package sessiontree

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// MessageInfo is what the engine reads from a message payload: its role,
// the provider and model of an assistant message, and its usage. Nothing
// else of a message is decoded.
type MessageInfo struct {
	Role     string
	Provider string
	Model    string
	// ResponseModel is the model the provider answered with, when it
	// named one (pi 1.x).
	ResponseModel string
	// Usage is the raw "usage" object, nil when absent.
	Usage json.RawMessage
}

// MessageInfoOf reads the [MessageInfo] of a message entry; other entries
// give the zero value.
func MessageInfoOf(e Entry) MessageInfo {
	if e.Type != TypeMessage {
		return MessageInfo{}
	}
	m := readMembers(e.Raw)
	return readMessage(e.Type, &m, false).info
}

// Stats are pi 1.6.0's /session totals over a session's whole log, every
// branch included (DESIGN.md section 3, PI1.md section 9). It marshals to
// pi's shape.
type Stats struct {
	// Entries counts every entry, leaf entries included. It is not part of
	// pi's shape.
	Entries int64 `json:"-"`
	// UserMessages, AssistantMessages and ToolResults count message
	// entries by role; ToolCalls counts the toolCall blocks of assistant
	// messages; TotalMessages counts every message entry, system messages
	// included.
	UserMessages      int64 `json:"userMessages"`
	AssistantMessages int64 `json:"assistantMessages"`
	ToolCalls         int64 `json:"toolCalls"`
	ToolResults       int64 `json:"toolResults"`
	TotalMessages     int64 `json:"totalMessages"`
	// Tokens are summed over assistant and tool-result message usage,
	// usage entries, and compaction and branch-summary usage.
	Tokens TokenStats `json:"tokens"`
	// Cost is the sum of usage.cost.total over the same records.
	Cost float64 `json:"cost"`
	// Breakdown is cost and tokens per provider/model, plus one
	// [ToolsBucket] for tool results and summaries, as pi's /session shows
	// it: see [SortBreakdown]. Never nil.
	Breakdown []UsageBucket `json:"breakdown"`
}

// TokenStats are token totals.
type TokenStats struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	// Total is Input + Output + CacheRead + CacheWrite.
	Total int64 `json:"total"`
}

// UsageBucket is one row of the cost breakdown.
type UsageBucket struct {
	// Key is "provider/model", or [ToolsBucket].
	Key string `json:"key"`
	// Cost is the bucket's summed cost.total.
	Cost float64 `json:"cost"`
	// Tokens is the bucket's input + output + cacheRead + cacheWrite.
	Tokens int64 `json:"tokens"`
}

// ToolsBucket is the breakdown key of usage no model is named for: tool
// results and compaction and branch summaries.
const ToolsBucket = "Tools/summaries"

// SortBreakdown puts buckets given in the order of their first use into
// pi's order: buckets with neither cost nor tokens dropped, the rest by
// cost, highest first, ties in order of first use. It sorts in place and
// returns the (never nil) result.
func SortBreakdown(buckets []UsageBucket) []UsageBucket {
	out := buckets[:0:0]
	for _, b := range buckets {
		if b.Cost > 0 || b.Tokens > 0 {
			out = append(out, b)
		}
	}
	slices.SortStableFunc(out, func(a, b UsageBucket) int { return cmp.Compare(b.Cost, a.Cost) })
	if out == nil {
		out = []UsageBucket{}
	}
	return out
}

// Usage is one usage record as Stats counts it.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
	Cost                                 float64
}

// Tokens is the record's input + output + cacheRead + cacheWrite.
func (u Usage) Tokens() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// EntryStats is what one entry contributes to [Stats]: the one owner of
// pi's counting rules.
type EntryStats struct {
	// Message is true for a message entry; Role is its role.
	Message bool
	Role    string
	// ToolCalls counts an assistant message's toolCall blocks.
	ToolCalls int64
	// Usage is the entry's usage record when HasUsage (malformed usage is
	// skipped); Bucket is its breakdown key.
	Usage    Usage
	HasUsage bool
	Bucket   string
}

// StatsOf returns what entry e contributes to [Stats]: assistant messages
// their usage under "provider/(responseModel ?? model)", usage entries
// theirs under "provider/model" (each part as pi's template literal
// writes the value: "undefined" when absent, "null", "" or "5" as they
// are), tool-result messages and compaction and
// branch-summary entries theirs under [ToolsBucket].
func StatsOf(e Entry) EntryStats {
	switch e.Type {
	case TypeMessage, TypeUsage, TypeCompaction, TypeBranchSummary:
		m := readMembers(e.Raw)
		msg := readMessage(e.Type, &m, false)
		return statsFrom(e.Type, &m, &msg, false)
	}
	return statsFrom(e.Type, nil, &messageRead{}, false) // the others count as entries only
}

// statsFrom is StatsOf of an entry of type t whose members are m and
// message msg; checked says that its JSON is known valid.
func statsFrom(t EntryType, m *members, msg *messageRead, checked bool) EntryStats {
	var es EntryStats
	var raw json.RawMessage
	switch t {
	case TypeMessage:
		es.Message = true
		info := msg.info
		es.Role = info.Role
		switch info.Role {
		case "assistant":
			raw, checked = info.Usage, true // a message's values are checked as it is read
			es.ToolCalls = countToolCalls(msg.content, msg.checked)
			model := msg.responseModel
			if model == nil || jsonx.IsNull(model) {
				model = msg.model // responseModel ?? model
			}
			es.Bucket = bucketKey(msg.provider, model)
		case "toolResult":
			raw, es.Bucket, checked = info.Usage, ToolsBucket, true
		}
	case TypeUsage:
		raw, _ = m.get(mUsage)
		es.Bucket = bucketKey(m[mProvider], m[mModel])
	case TypeCompaction, TypeBranchSummary:
		raw, _ = m.get(mUsage)
		es.Bucket = ToolsBucket
	}
	es.Usage, es.HasUsage = usageOf(raw, checked)
	return es
}

// bucketKey is the breakdown key of a provider and a model, JSON values
// (nil when absent), as pi writes it, `${provider}/${model}`: a JavaScript
// template literal writes an absent value "undefined", null "null", ""
// as nothing and any other value as String() does (5 as "5").
func bucketKey(provider, model []byte) string {
	return templateText(provider) + "/" + templateText(model)
}

// templateText is the JSON value raw (nil when absent) as a JavaScript
// template literal writes it.
func templateText(raw []byte) string {
	switch {
	case raw == nil:
		return "undefined"
	case jsonx.IsNull(raw):
		return "null"
	}
	return jsText(raw)
}

// UsageFromJSON reads a usage object. ok is false when raw is not an
// object with numeric input and output within ±2^30 (such usage is
// skipped, see maxUsageNumber); a cacheRead, cacheWrite or cost.total that
// is not such a number counts as 0.
func UsageFromJSON(raw json.RawMessage) (u Usage, ok bool) { return usageOf(raw, false) }

// usageOf is UsageFromJSON, checking raw unless checked says it is known
// valid JSON. Its members are read in one walk.
func usageOf(raw []byte, checked bool) (u Usage, ok bool) {
	if len(raw) == 0 || raw[0] != '{' || !checked && jsonx.Valid(raw) != nil {
		return Usage{}, false
	}
	// Keys are matched exactly, as JavaScript reads them.
	v := readMembers(raw)
	input, okIn := usageNumber(v[mInput])
	output, okOut := usageNumber(v[mOutput])
	if !okIn || !okOut {
		return Usage{}, false
	}
	u = Usage{Input: int64(input), Output: int64(output)}
	if n, ok := usageNumber(v[mCacheRead]); ok {
		u.CacheRead = int64(n)
	}
	if n, ok := usageNumber(v[mCacheWrite]); ok {
		u.CacheWrite = int64(n)
	}
	if v[mCost] != nil {
		total, _ := jsonx.Field(v[mCost], "total")
		if n, ok := usageNumber(total); ok {
			u.Cost = n
		}
	}
	return u, true
}

// Tally accumulates [Stats] entry by entry, in log order (the order
// matters: costs are summed as pi sums them). The zero value is empty.
type Tally struct {
	stats   Stats
	buckets []UsageBucket
}

// ResumeTally returns a tally that goes on from totals kept elsewhere (a
// database row): s without its Breakdown, and the breakdown's buckets in
// order of first use, as [Tally.Buckets] gave them.
func ResumeTally(s Stats, firstUse []UsageBucket) Tally {
	s.Breakdown = nil
	return Tally{stats: s, buckets: slices.Clone(firstUse)}
}

// Add counts one entry.
func (t *Tally) Add(e Entry) { t.AddEntryStats(StatsOf(e)) }

// AddEntryStats counts what one entry contributes.
func (t *Tally) AddEntryStats(es EntryStats) {
	s := &t.stats
	s.Entries++
	if es.Message {
		s.TotalMessages++
		switch es.Role {
		case "user":
			s.UserMessages++
		case "assistant":
			s.AssistantMessages++
		case "toolResult":
			s.ToolResults++
		}
		s.ToolCalls += es.ToolCalls
	}
	if !es.HasUsage {
		return
	}
	s.AddUsage(es.Usage)
	i := slices.IndexFunc(t.buckets, func(b UsageBucket) bool { return b.Key == es.Bucket })
	if i < 0 {
		t.buckets = append(t.buckets, UsageBucket{Key: es.Bucket})
		i = len(t.buckets) - 1
	}
	t.buckets[i].Cost += es.Usage.Cost
	t.buckets[i].Tokens += es.Usage.Tokens()
}

// Buckets returns the breakdown so far in order of first use.
func (t *Tally) Buckets() []UsageBucket { return slices.Clone(t.buckets) }

// Stats returns the totals so far, the breakdown in pi's order.
func (t *Tally) Stats() Stats {
	s := t.stats
	s.Breakdown = SortBreakdown(t.Buckets())
	return s
}

// AddUsage adds one usage record to the token and cost totals.
func (s *Stats) AddUsage(u Usage) {
	t := &s.Tokens
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.Total = t.Input + t.Output + t.CacheRead + t.CacheWrite
	s.Cost += u.Cost
}

// maxUsageNumber bounds the magnitude of a usage record's token counts
// and cost: a billion tokens or dollars in one call, a thousand times any
// model's context window. A larger number, which only a broken or hostile
// file holds, is malformed (see [UsageFromJSON]): totals are 64-bit
// integers and float sums, which such numbers would wrap to another value
// or carry to infinity (and PostgreSQL refuse to store), where with this
// bound no sum of fewer than 2^31 records can.
const maxUsageNumber = 1 << 30

// usageNumber reads the raw value of a numeric field of a usage object
// (nil when absent); ok is false for anything else, and for a number
// beyond ±maxUsageNumber.
func usageNumber(raw []byte) (float64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	return v, err == nil && -maxUsageNumber <= v && v <= maxUsageNumber
}
