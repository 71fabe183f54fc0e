package view

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sessiontree/sessiontree"
)

// Share is a session read once for sharing: what [WriteMarkdown] and
// [WriteHTML] show. Load it with [LoadShare].
type Share struct {
	// Meta is the session's header.
	Meta sessiontree.SessionMeta
	// Name is the session name, "" when it has none.
	Name string
	// Stats are the token and cost totals over every branch.
	Stats sessiontree.Stats
	// Data is the log, labels and leaf.
	Data SessionData
}

// LoadShare reads what a shared page shows of a session: its metadata,
// name, totals, log, labels and leaf, through the storage interface.
func LoadShare(ctx context.Context, st sessiontree.Storage) (Share, error) {
	var s Share
	var err error
	if s.Meta, err = st.Meta(ctx); err != nil {
		return s, fmt.Errorf("read metadata: %w", err)
	}
	if s.Name, err = st.Name(ctx); err != nil {
		return s, fmt.Errorf("read name: %w", err)
	}
	if s.Stats, err = st.Stats(ctx); err != nil {
		return s, fmt.Errorf("read stats: %w", err)
	}
	if s.Data, err = LoadSessionData(ctx, st); err != nil {
		return s, err
	}
	return s, nil
}

// title is the page's title: the session name, else the session id.
func (s Share) title() string {
	if s.Name != "" {
		return OneLine(s.Name)
	}
	return "Session " + ShortID(s.Meta.ID)
}

// facts are the lines at the top of a shared page: what the session is,
// where and when it ran, with which models, and what it cost.
func (s Share) facts(branches int) [][2]string {
	rows := [][2]string{
		{"Session", s.Meta.ID},
		{"Working directory", s.Meta.Cwd},
		{"Created", timeText(s.Meta.CreatedAt)},
	}
	if s.Meta.ParentSession != "" {
		rows = append(rows, [2]string{"Forked from", s.Meta.ParentSession})
	}
	if models := s.models(); len(models) > 0 {
		rows = append(rows, [2]string{"Models", strings.Join(models, ", ")})
	}
	t := s.Stats.Tokens
	return append(rows,
		[2]string{"Tokens (all branches)", fmt.Sprintf("%s (%s input, %s output, %s cache read, %s cache write)",
			Count(t.Total), Count(t.Input), Count(t.Output), Count(t.CacheRead), Count(t.CacheWrite))},
		[2]string{"Cost (all branches)", fmt.Sprintf("$%.4f", s.Stats.Cost)},
		[2]string{"Entries", fmt.Sprintf("%s in %s", Count(int64(len(s.Data.Log))), branchCount(branches))},
	)
}

// timeText is an ISO time as "2006-01-02 15:04:05 UTC", or as written
// when it does not parse.
func timeText(ts string) string {
	t, err := sessiontree.ParseTime(ts)
	if err != nil {
		return OneLine(ts)
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// models lists the models the session used, "provider/model", in the
// order of first use: model changes and assistant messages, every branch.
func (s Share) models() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range s.Data.Log {
		var name string
		switch e.Type {
		case sessiontree.TypeModelChange:
			p, _ := e.String("provider")
			m, _ := e.String("modelId")
			name = message{Provider: p, Model: m}.modelName()
		case sessiontree.TypeMessage:
			if info := sessiontree.MessageInfoOf(e); info.Role == "assistant" {
				name = message{Provider: info.Provider, Model: info.Model}.modelName()
			}
		}
		if name = OneLine(name); name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// partKind says what a part of a turn is.
type partKind int

const (
	// partText is prose: Markdown as the author wrote it.
	partText partKind = iota
	// partThinking is an assistant's thinking, shown folded.
	partThinking
	// partCode is literal text shown as a code block: tool calls and
	// results, commands, system prompts.
	partCode
	// partImage is an image block, base64 data with its MIME type.
	partImage
)

// part is one piece of a turn's body.
type part struct {
	Kind  partKind
	Title string // above a code block, "" for none
	Lang  string // a code block's language, "" for none
	Text  string
	Mime  string // an image's MIME type
	Data  string // an image's base64 data, as stored
}

// turn is one entry as a shared page shows it: a heading, a line of
// details and a body. Both formats render the same turns.
type turn struct {
	Entry sessiontree.Entry
	// Kind is the turn's class: a message role ("user", "assistant",
	// "toolResult", "bashExecution", "system", "custom"), "compaction",
	// "branchSummary", or "note" for entries shown as one line.
	Kind string
	// Title is the heading ("User", "Tool result"), or a note's text.
	Title string
	// Details follow the title: model, tool, exit code, tokens before.
	Details []string
	// Folded turns show their body collapsed under this summary (system
	// prompts); "" shows it open.
	Folded string
	Parts  []part
}

// turnOf makes the turn an entry is shown as.
func turnOf(e sessiontree.Entry) turn {
	str := func(name string) string { s, _ := e.String(name); return s }
	switch e.Type {
	case sessiontree.TypeMessage:
		raw, _ := e.Field("message")
		return messageTurn(e, raw)
	case sessiontree.TypeCustomMessage:
		m := message{CustomType: str("customType")}
		m.Content, _ = e.Field("content")
		m.parseContent()
		t := turn{Entry: e, Kind: "custom", Title: "Custom message", Details: nonEmpty(m.CustomType)}
		if raw, ok := e.Field("display"); ok && string(raw) == "false" {
			t.Details = append(t.Details, "not displayed")
		}
		t.Parts = contentParts(m, partText)
		return t
	case sessiontree.TypeCompaction:
		t := turn{Entry: e, Kind: "compaction", Title: "Compaction"}
		if raw, ok := e.Field("tokensBefore"); ok {
			var n json.Number
			if json.Unmarshal(raw, &n) == nil {
				count := n.String()
				if i, err := n.Int64(); err == nil {
					count = Count(i)
				}
				t.Details = append(t.Details, count+" tokens before")
			}
		}
		t.Parts = textParts(str("summary"))
		if kept := retainedParts(e); len(kept) > 0 {
			t.Details = append(t.Details, "keeps "+plural(len(kept), "message"))
			t.Parts = append(t.Parts, kept...)
		}
		return t
	case sessiontree.TypeBranchSummary:
		t := turn{Entry: e, Kind: "branchSummary", Title: "Branch summary"}
		if from := str("fromId"); from != "" {
			t.Details = append(t.Details, "from "+ShortID(from))
		}
		t.Parts = textParts(str("summary"))
		return t
	}
	return turn{Entry: e, Kind: "note", Title: EntrySummary(e)}
}

// retainedParts are the messages a compaction keeps inline (its
// retainedTail), which the model reads after the summary: one code block
// each, under its role, with its text as `context` shows it.
func retainedParts(e sessiontree.Entry) []part {
	raw, ok := e.Field("retainedTail")
	if !ok {
		return nil
	}
	var tail []json.RawMessage
	_ = json.Unmarshal(raw, &tail) // not a list: nothing kept to show
	parts := make([]part, 0, len(tail))
	for _, m := range tail {
		mt := messageTurn(e, m)
		title := strings.Join(append([]string{"Kept: " + mt.Title}, mt.Details...), " · ")
		parts = append(parts, part{Kind: partCode, Title: title, Text: parseMessage(m).body(m)})
	}
	return parts
}

// messageTurn makes the turn of a message entry.
func messageTurn(e sessiontree.Entry, raw json.RawMessage) turn {
	m := parseMessage(raw)
	t := turn{Entry: e, Kind: m.Role, Title: m.Role}
	switch m.Role {
	case "user":
		t.Title = "User"
		t.Parts = contentParts(m, partText)
	case "assistant":
		t.Title = "Assistant"
		t.Details = nonEmpty(m.modelName())
		if m.StopReason != "" && m.StopReason != "stop" && m.StopReason != "toolUse" {
			t.Details = append(t.Details, "stop: "+m.StopReason)
		}
		t.Parts = contentParts(m, partText)
		if m.ErrorMessage != "" {
			t.Parts = append(t.Parts, part{Kind: partCode, Title: "Error", Text: m.ErrorMessage})
		}
	case "toolResult":
		t.Title = "Tool result"
		t.Details = nonEmpty(m.ToolName)
		if m.IsError {
			t.Details = append(t.Details, "error")
		}
		t.Parts = contentParts(m, partCode)
	case "bashExecution":
		t.Title = "Bash"
		t.Details = m.bashDetails()
		t.Parts = []part{{Kind: partCode, Lang: "console", Text: m.bashText()}}
	case "system":
		t.Title = "System prompt"
		t.Folded = "Prompt sections and tools"
		t.Parts = systemParts(raw, m)
	case "custom", "hookMessage":
		t.Kind = "custom"
		t.Title = "Custom message"
		t.Details = nonEmpty(m.CustomType)
		t.Parts = contentParts(m, partText)
	case "":
		t.Kind, t.Title = "note", "message"
	default:
		t.Kind = "other"
		t.Parts = contentParts(m, partCode)
	}
	return t
}

// nonEmpty is the list of the non-empty strings among ss.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s = OneLine(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// textParts is one text part, none for blank text.
func textParts(s string) []part {
	if s = strings.TrimRight(s, " \t\r\n"); s == "" {
		return nil
	}
	return []part{{Kind: partText, Text: s}}
}

// contentParts are a message's content blocks as parts: its text as
// textKind (prose for people's and the model's words, code for tool
// output), thinking folded, tool calls as JSON code blocks, images.
func contentParts(m message, textKind partKind) []part {
	var parts []part
	text := func(s string) {
		if s = strings.TrimRight(s, " \t\r\n"); s != "" {
			parts = append(parts, part{Kind: textKind, Text: s})
		}
	}
	text(m.text)
	for _, b := range m.blocks {
		switch b.Type {
		case "text":
			text(b.Text)
		case "thinking":
			if s := strings.TrimRight(b.Thinking, " \t\r\n"); s != "" {
				parts = append(parts, part{Kind: partThinking, Text: s})
			}
		case "toolCall":
			parts = append(parts, part{Kind: partCode, Title: "→ " + OneLine(b.Name), Lang: "json", Text: indentJSON(b.Arguments)})
			if b.ArgumentsError != "" {
				parts = append(parts, part{Kind: partCode, Title: "Arguments error", Text: b.ArgumentsError})
			}
		case "image":
			parts = append(parts, part{Kind: partImage, Mime: OneLine(b.MimeType), Data: b.Data})
		default:
			parts = append(parts, part{Kind: partCode, Text: "[" + OneLine(b.Type) + " block]"})
		}
	}
	return parts
}

// systemParts are a system message's parts: its instruction text, each
// prompt section under its name, and the tools it adds and removes.
func systemParts(raw json.RawMessage, m message) []part {
	var sys struct {
		Sections     orderedSections         `json:"sections"`
		ToolsAdded   []struct{ Name string } `json:"toolsAdded"`
		ToolsRemoved []struct{ Name string } `json:"toolsRemoved"`
	}
	_ = json.Unmarshal(raw, &sys)
	parts := contentParts(m, partCode)
	for _, s := range sys.Sections {
		text := "(section removed)"
		if s.Text != nil {
			text = strings.TrimRight(*s.Text, " \t\r\n")
		}
		parts = append(parts, part{Kind: partCode, Title: "Section " + OneLine(s.Name), Text: text})
	}
	names := func(tools []struct{ Name string }) string {
		var ns []string
		for _, t := range tools {
			ns = append(ns, OneLine(t.Name))
		}
		return strings.Join(ns, ", ")
	}
	if len(sys.ToolsAdded) > 0 {
		parts = append(parts, part{Kind: partCode, Title: "Tools added", Text: names(sys.ToolsAdded)})
	}
	if len(sys.ToolsRemoved) > 0 {
		parts = append(parts, part{Kind: partCode, Title: "Tools removed", Text: names(sys.ToolsRemoved)})
	}
	return parts
}

// orderedSections are a system message's prompt sections in the order
// written (a Go map would lose it); a null section is a removal.
type orderedSections []struct {
	Name string
	Text *string
}

func (o *orderedSections) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil // not an object: no sections to show
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		var text *string
		if json.Unmarshal(raw, &text) != nil {
			s := string(raw) // a section that is not text: show its JSON
			text = &s
		}
		*o = append(*o, struct {
			Name string
			Text *string
		}{name, text})
	}
	return nil
}

// indentJSON is JSON indented by two spaces, or as written when it does
// not parse; "{}" when empty.
func indentJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}

// markNote says in words what an edit mark (see [SessionData.EditMarks])
// does to an entry, "" for no mark.
func markNote(mark string) string {
	switch mark {
	case MarkOmitted:
		return "omitted from the model's context by an edit"
	case MarkEdited:
		return "replaced in the model's context by an edit"
	}
	return ""
}

// branchCount is "1 branch" or "n branches".
func branchCount(n int) string {
	if n == 1 {
		return "1 branch"
	}
	return Count(int64(n)) + " branches"
}
