package sessiontree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// The constructors below write the agent messages an agent appends most
// ([Session.AppendMessage]) in the shapes of pi 1.6.0's types (pi-ai's
// UserMessage, AssistantMessage and ToolResultMessage), members in the
// order pi writes them, so that pi reads a session written with them as
// one it wrote. A message's timestamp is Unix milliseconds, as pi's
// Date.now(); a zero time means now.

// UserMessage returns a user message of text as pi's agent writes a
// prompt: {"role":"user","content":[{"type":"text","text":…}],"timestamp":…}.
func UserMessage(text string, at time.Time) json.RawMessage {
	m, _ := marshalMessage(struct {
		Role      string      `json:"role"`
		Content   []textBlock `json:"content"`
		Timestamp int64       `json:"timestamp"`
	}{"user", []textBlock{{"text", text}}, millis(at)}) // strings and numbers always marshal
	return m
}

// AssistantReply is an assistant message to write with
// [AssistantMessage]: its text, then its tool calls, and what pi records
// of the model that wrote it.
type AssistantReply struct {
	// API, Provider and Model name the model ("anthropic-messages",
	// "anthropic", "claude-sonnet-4"): the provider and model set the
	// session's model ([State]) and its usage's breakdown key.
	API, Provider, Model string
	// Text is the reply's text block, left out when "".
	Text string
	// ToolCalls follow the text, in order.
	ToolCalls []ToolCall
	// Usage is the tokens and cost of the reply.
	Usage MessageUsage
	// StopReason is pi's ("stop", "length", "toolUse", "error",
	// "aborted"); "" means "toolUse" with tool calls, else "stop".
	StopReason string
	// At is when the reply was made; zero means now.
	At time.Time
}

// ToolCall is a call of a tool in an assistant message: pi's
// {"type":"toolCall","id","name","arguments"}.
type ToolCall struct {
	// ID is the call's id, which the tool result names.
	ID   string
	Name string
	// Arguments is a JSON object; nil means {}.
	Arguments json.RawMessage
}

// MessageUsage is the usage of an assistant message as pi-ai records it:
// tokens by kind and their cost, in the JSON
// {"input","output","cacheRead","cacheWrite","totalTokens","cost":{…}},
// totalTokens being the four counts' sum.
type MessageUsage struct {
	Input, Output, CacheRead, CacheWrite int64
	Cost                                 UsageCost
}

// UsageCost is the cost of a message's tokens by kind; a zero Total is
// written as the sum of the four, as pi-ai computes it.
type UsageCost struct {
	Input, Output, CacheRead, CacheWrite, Total float64
}

// AssistantMessage returns the assistant message of r in pi's shape:
// {"role":"assistant","content":[text, toolCall…],"api","provider",
// "model","usage","stopReason","timestamp"}. It fails with a
// [*InvalidEntryError] when a tool call's arguments are not a JSON object.
func AssistantMessage(r AssistantReply) (json.RawMessage, error) {
	content := make([]any, 0, 1+len(r.ToolCalls))
	if r.Text != "" {
		content = append(content, textBlock{"text", r.Text})
	}
	for _, c := range r.ToolCalls {
		args, err := jsonObject(c.Arguments)
		if err != nil {
			return nil, &InvalidEntryError{Reason: fmt.Sprintf("tool call %s arguments: %v", c.ID, err)}
		}
		content = append(content, toolCallBlock{"toolCall", c.ID, c.Name, args})
	}
	stop := r.StopReason
	switch {
	case stop == "" && len(r.ToolCalls) > 0:
		stop = "toolUse"
	case stop == "":
		stop = "stop"
	}
	return marshalMessage(struct {
		Role       string    `json:"role"`
		Content    []any     `json:"content"`
		API        string    `json:"api"`
		Provider   string    `json:"provider"`
		Model      string    `json:"model"`
		Usage      usageJSON `json:"usage"`
		StopReason string    `json:"stopReason"`
		Timestamp  int64     `json:"timestamp"`
	}{"assistant", content, r.API, r.Provider, r.Model, r.Usage.json(), stop, millis(r.At)})
}

// ToolResult is a tool's result to write with [ToolResultMessage].
type ToolResult struct {
	// ToolCallID and ToolName name the call it answers.
	ToolCallID, ToolName string
	// Text is the result's content, one text block.
	Text    string
	IsError bool
	// Details is JSON for the agent's own use, not sent to the model;
	// nil leaves it out.
	Details json.RawMessage
	// At is when the result was made; zero means now.
	At time.Time
}

// ToolResultMessage returns the tool result r in pi's shape:
// {"role":"toolResult","toolCallId","toolName","content":[text],
// "details"?,"isError","timestamp"}. It fails with a [*InvalidEntryError]
// when Details is not JSON.
func ToolResultMessage(r ToolResult) (json.RawMessage, error) {
	if r.Details != nil && !json.Valid(r.Details) {
		return nil, &InvalidEntryError{Reason: fmt.Sprintf("tool result %s details: not valid JSON", r.ToolCallID)}
	}
	return marshalMessage(struct {
		Role       string          `json:"role"`
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Content    []textBlock     `json:"content"`
		Details    json.RawMessage `json:"details,omitempty"`
		IsError    bool            `json:"isError"`
		Timestamp  int64           `json:"timestamp"`
	}{"toolResult", r.ToolCallID, r.ToolName, []textBlock{{"text", r.Text}}, r.Details, r.IsError, millis(r.At)})
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolCallBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// usageJSON is a MessageUsage as pi-ai writes it.
type usageJSON struct {
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

func (u MessageUsage) json() usageJSON {
	out := usageJSON{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
		TotalTokens: u.Input + u.Output + u.CacheRead + u.CacheWrite}
	c := u.Cost
	if c.Total == 0 {
		c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite // pi-ai's order
	}
	out.Cost.Input, out.Cost.Output, out.Cost.CacheRead, out.Cost.CacheWrite, out.Cost.Total =
		c.Input, c.Output, c.CacheRead, c.CacheWrite, c.Total
	return out
}

// jsonObject returns raw when it is a JSON object, {} when nil.
func jsonObject(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return json.RawMessage("{}"), nil
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return nil, fmt.Errorf("%.40q is not a JSON object", raw)
	}
	return t, nil
}

// marshalMessage writes v as JSON.stringify would: without escaping
// <, > and & as encoding/json does by default.
func marshalMessage(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// millis is at as a message timestamp, now when at is zero.
func millis(at time.Time) int64 {
	if at.IsZero() {
		at = time.Now()
	}
	return at.UnixMilli()
}
