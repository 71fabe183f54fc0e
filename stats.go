package sessiontree

import (
	"encoding/json"
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
	// Usage is the raw "usage" object, nil when absent.
	Usage json.RawMessage
}

// MessageInfoOf reads the [MessageInfo] of a message entry; other entries
// give the zero value.
func MessageInfoOf(e Entry) MessageInfo {
	var info MessageInfo
	if e.Type != TypeMessage {
		return info
	}
	msg, ok := e.Field("message")
	if !ok {
		return info
	}
	_ = jsonx.ObjectMembers(msg, func(k, v []byte) error {
		switch {
		case jsonx.KeyEquals(k, "role"):
			info.Role, _ = jsonx.Unquote(v)
		case jsonx.KeyEquals(k, "provider"):
			info.Provider, _ = jsonx.Unquote(v)
		case jsonx.KeyEquals(k, "model"):
			info.Model, _ = jsonx.Unquote(v)
		case jsonx.KeyEquals(k, "usage"):
			info.Usage = v
		}
		return nil
	})
	return info
}

// Stats are counts and token totals over a session's whole log
// (DESIGN.md section 3).
type Stats struct {
	// Entries counts every entry, leaf entries included.
	Entries int64 `json:"entries"`
	// Messages counts message entries.
	Messages int64 `json:"messages"`
	// Tokens are summed over assistant messages and over compaction and
	// branch-summary entries that carry usage.
	Tokens TokenStats `json:"tokens"`
	// Cost is the sum of usage.cost.total.
	Cost float64 `json:"cost"`
}

// TokenStats are token totals.
type TokenStats struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	// Cached is CacheRead.
	Cached int64 `json:"cached"`
	// Uncached is Input + CacheWrite.
	Uncached int64 `json:"uncached"`
	// Total is Input + Output + CacheRead + CacheWrite.
	Total int64 `json:"total"`
}

// Usage is one usage record as Stats counts it.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
	Cost                                 float64
}

// UsageOf returns the usage an entry contributes to [Stats]: an assistant
// message's usage, or a compaction's or branch summary's. ok is false when
// the entry carries none or when it is malformed (such usage is skipped).
func UsageOf(e Entry) (u Usage, ok bool) {
	var raw json.RawMessage
	switch e.Type {
	case TypeMessage:
		info := MessageInfoOf(e)
		if info.Role != "assistant" {
			return Usage{}, false
		}
		raw = info.Usage
	case TypeCompaction, TypeBranchSummary:
		raw, _ = e.Field("usage")
	default:
		return Usage{}, false
	}
	if len(raw) == 0 || raw[0] != '{' || jsonx.Valid(raw) != nil {
		return Usage{}, false
	}
	// Keys are matched exactly, as JavaScript reads them.
	input, okIn := usageNumber(raw, "input")
	output, okOut := usageNumber(raw, "output")
	if !okIn || !okOut {
		return Usage{}, false
	}
	u = Usage{Input: int64(input), Output: int64(output)}
	if v, ok := usageNumber(raw, "cacheRead"); ok {
		u.CacheRead = int64(v)
	}
	if v, ok := usageNumber(raw, "cacheWrite"); ok {
		u.CacheWrite = int64(v)
	}
	if cost, ok := jsonx.Field(raw, "cost"); ok {
		if v, ok := usageNumber(cost, "total"); ok {
			u.Cost = v
		}
	}
	return u, true
}

// Add counts one entry into the stats.
func (s *Stats) Add(e Entry) {
	s.Entries++
	if e.Type == TypeMessage {
		s.Messages++
	}
	if u, ok := UsageOf(e); ok {
		s.AddUsage(u)
	}
}

// AddUsage adds one usage record to the totals.
func (s *Stats) AddUsage(u Usage) {
	t := &s.Tokens
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.Cached = t.CacheRead
	t.Uncached = t.Input + t.CacheWrite
	t.Total = t.Input + t.Output + t.CacheRead + t.CacheWrite
	s.Cost += u.Cost
}

// usageNumber reads a numeric field of a usage object.
func usageNumber(obj json.RawMessage, name string) (float64, bool) {
	raw, ok := jsonx.Field(obj, name)
	if !ok || len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	return v, err == nil
}
