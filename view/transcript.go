package view

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree"
)

// WriteTranscript writes what the model sees as a readable transcript: a
// line with the state (thinking level, model, active tools), then each
// message under a bracketed header naming its role (and the model of an
// assistant message, the tool of a tool result), with its text, thinking,
// tool calls and images. Nothing is cut: pipe it to a pager. Control
// characters show as U+FFFD ([TermText]); the state and each header stay
// on their line ([OneLine]), so a line break in a name never reads as
// the header of another message.
func WriteTranscript(w io.Writer, c sessiontree.Context) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(OneLine(stateLine(c.State)))
	bw.WriteByte('\n')
	if len(c.Messages) == 0 {
		bw.WriteString("\n(no messages)\n")
	}
	for _, raw := range c.Messages {
		m := parseMessage(raw)
		bw.WriteByte('\n')
		bw.WriteString(OneLine(m.header(raw)))
		bw.WriteByte('\n')
		if body := m.body(raw); body != "" {
			bw.WriteString(TermText(body))
			bw.WriteByte('\n')
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write transcript: %w", err)
	}
	return nil
}

func stateLine(st sessiontree.State) string {
	model := "none"
	if st.Model != nil {
		model = (message{Provider: st.Model.Provider, Model: st.Model.ModelID}).modelName()
	}
	tools := "default"
	if st.ActiveToolNames != nil {
		tools = strings.Join(st.ActiveToolNames, ", ")
		if tools == "" {
			tools = "none"
		}
	}
	return fmt.Sprintf("model: %s · thinking: %s · tools: %s", model, st.ThinkingLevel, tools)
}

// header is the bracketed line above a message.
func (m message) header(raw []byte) string {
	parts := []string{m.Role}
	if m.Role == "" {
		parts[0] = "message"
	}
	switch m.Role {
	case "assistant":
		if name := m.modelName(); name != "" {
			parts = append(parts, name)
		}
		if m.StopReason != "" && m.StopReason != "stop" && m.StopReason != "toolUse" {
			parts = append(parts, "stop: "+m.StopReason)
		}
	case "toolResult":
		if m.ToolName != "" {
			parts = append(parts, m.ToolName)
		}
		if m.IsError {
			parts = append(parts, "error")
		}
	case "bashExecution":
		parts = append(parts, m.bashDetails()...)
	case "custom", "hookMessage":
		if m.CustomType != "" {
			parts = append(parts, m.CustomType)
		}
	case "branchSummary":
		if m.FromID != "" {
			parts = append(parts, "from "+m.FromID)
		}
	case "compactionSummary":
		if m.TokensBefore != nil {
			parts = append(parts, m.TokensBefore.String()+" tokens before")
		}
	}
	if t, ok := messageTime(raw); ok {
		parts = append(parts, t.UTC().Format("2006-01-02 15:04:05"))
	}
	return "[" + strings.Join(parts, " · ") + "]"
}

// messageTime reads a message's "timestamp", Unix milliseconds.
func messageTime(raw []byte) (time.Time, bool) {
	var v struct {
		Timestamp *json.Number `json:"timestamp"`
	}
	if json.Unmarshal(raw, &v) != nil || v.Timestamp == nil {
		return time.Time{}, false
	}
	ms, err := v.Timestamp.Int64()
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// body is the message's content as text.
func (m message) body(raw []byte) string {
	var parts []string
	add := func(s string) {
		if s = strings.TrimRight(s, " \t\r\n"); s != "" {
			parts = append(parts, s)
		}
	}
	switch m.Role {
	case "bashExecution":
		add(m.bashText())
		return strings.Join(parts, "\n")
	case "compactionSummary", "branchSummary":
		add(m.Summary)
		return strings.Join(parts, "\n")
	case "system":
		for _, p := range systemParts(raw, m) {
			add(p.plainText())
		}
		return strings.Join(parts, "\n")
	}
	add(m.text)
	for _, b := range m.blocks {
		switch b.Type {
		case "text":
			add(b.Text)
		case "thinking":
			if strings.TrimSpace(b.Thinking) != "" {
				add(indent(b.Thinking, "thinking: ", "          "))
			}
		case "toolCall":
			add("→ " + b.Name + " " + compactJSON(b.Arguments))
			if b.ArgumentsError != "" {
				add(indent(b.ArgumentsError, "  arguments error: ", "  "))
			}
		case "image":
			add("[image " + b.MimeType + "]")
		default:
			add("[" + b.Type + "]")
		}
	}
	if m.ErrorMessage != "" {
		add("error: " + m.ErrorMessage)
	}
	return strings.Join(parts, "\n")
}

// plainText is a part of a shared page's turn as transcript text: its
// title, then its text on the same line when it is one line, else
// indented below.
func (p part) plainText() string {
	text := p.Text
	if p.Kind == partImage {
		text = "[image " + p.Mime + "]"
	}
	switch {
	case p.Title == "":
		return text
	case strings.Contains(text, "\n"):
		return p.Title + ":\n" + indent(text, "  ", "  ")
	}
	return p.Title + ": " + text
}

// indent prefixes the first line of s with first and the others with rest.
func indent(s, first, rest string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}
