package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sessiontree/sessiontree"
)

// block is one content block of an agent message.
type block struct {
	Type      string          `json:"type"`
	Data      string          `json:"data"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	MimeType  string          `json:"mimeType"`
	// ArgumentsError is set on a tool call whose arguments the model sent
	// as text that is not a JSON object: Arguments is then {} and this
	// says why, with the text the model sent.
	ArgumentsError string `json:"argumentsError"`
}

// message is the part of an agent message (or of a context message built
// from another entry) that is shown to people. Fields a role does not have
// stay empty; decoding never fails on unexpected shapes, it just shows less.
type message struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Provider  string          `json:"provider"`
	Model     string          `json:"model"`
	ToolName  string          `json:"toolName"`
	IsError   bool            `json:"isError"`
	Command   string          `json:"command"`
	Output    string          `json:"output"`
	ExitCode  *json.Number    `json:"exitCode"`
	Cancelled bool            `json:"cancelled"`
	// Truncated and FullOutputPath: a bash command's output was cut, the
	// whole of it kept in that file; the model is told so.
	Truncated      bool   `json:"truncated"`
	FullOutputPath string `json:"fullOutputPath"`
	// ExcludeFromContext marks a bash command the user ran with "!!":
	// pi never sends it to the model.
	ExcludeFromContext bool         `json:"excludeFromContext"`
	CustomType         string       `json:"customType"`
	Summary            string       `json:"summary"`
	FromID             string       `json:"fromId"`
	TokensBefore       *json.Number `json:"tokensBefore"`
	StopReason         string       `json:"stopReason"`
	ErrorMessage       string       `json:"errorMessage"`

	blocks []block
	text   string // Content when it is a plain string
}

func parseMessage(raw []byte) message {
	var m message
	if !decodeLoosely(raw, &m) {
		return message{}
	}
	m.parseContent()
	return m
}

// decodeLoosely decodes JSON into v, reporting whether it could: a field
// of another type than v expects ("isError": 0) is left empty and the
// others decoded, so that one odd field does not hide a whole message or
// block; JSON that does not parse, or is not an object, gives false.
func decodeLoosely(raw []byte, v any) bool {
	var typeErr *json.UnmarshalTypeError
	err := json.Unmarshal(raw, v)
	return err == nil || errors.As(err, &typeErr) && typeErr.Field != ""
}

func (m *message) parseContent() {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 {
		return
	}
	switch c[0] {
	case '"':
		_ = json.Unmarshal(c, &m.text)
	case '[':
		var raws []json.RawMessage
		if json.Unmarshal(c, &raws) != nil {
			return
		}
		for _, r := range raws {
			var b block
			if decodeLoosely(r, &b) {
				m.blocks = append(m.blocks, b)
			}
		}
	}
}

// texts returns the message's text: the string content, or its text
// blocks joined by blank lines.
func (m message) texts() string {
	if m.text != "" {
		return m.text
	}
	var parts []string
	for _, b := range m.blocks {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

func (m message) toolNames() []string {
	var names []string
	for _, b := range m.blocks {
		if b.Type == "toolCall" {
			names = append(names, b.Name)
		}
	}
	return names
}

func (m message) count(kind string) int {
	n := 0
	for _, b := range m.blocks {
		if b.Type == kind {
			n++
		}
	}
	return n
}

func (m message) exitCode() string {
	if m.ExitCode == nil {
		return "?"
	}
	return m.ExitCode.String()
}

// bashDetails describe a bash execution: its exit code, whether it was
// cancelled, and whether the model never sees it.
func (m message) bashDetails() []string {
	d := []string{"exit " + m.exitCode()}
	if m.Cancelled {
		d = append(d, "cancelled")
	}
	if m.ExcludeFromContext {
		d = append(d, "not sent to the model")
	}
	return d
}

// bashText is a bash execution as a console shows it, the command then
// its output, followed, when the output was cut, by the note pi adds for
// the model (bashExecutionToText) with the path of the whole output.
func (m message) bashText() string {
	s := strings.TrimRight("$ "+m.Command+"\n"+m.Output, "\n")
	if m.Truncated && m.FullOutputPath != "" {
		s += "\n\n[Output truncated. Full output: " + m.FullOutputPath + "]"
	}
	return s
}

// modelName is "provider/model" for an assistant message.
func (m message) modelName() string {
	switch {
	case m.Provider != "" && m.Model != "":
		return m.Provider + "/" + m.Model
	case m.Model != "":
		return m.Model
	}
	return m.Provider
}

// firstWords is the one-line summary of a message: its role and the start
// of what it says.
func (m message) firstWords() string {
	switch m.Role {
	case "":
		return "message"
	case "toolResult":
		s := "toolResult"
		if m.ToolName != "" {
			s += " " + m.ToolName
		}
		if m.IsError {
			s += " (error)"
		}
		return joinWords(s, m.withImages(m.texts()))
	case "bashExecution":
		return joinWords("bash", "$ "+m.Command+" (exit "+m.exitCode()+")")
	case "custom", "hookMessage":
		return joinWords(m.Role+" "+m.CustomType, m.withImages(m.texts()))
	case "compactionSummary", "branchSummary":
		return joinWords(m.Role, m.Summary)
	}
	words := m.texts()
	if words == "" {
		if n := m.count("thinking"); n > 0 {
			words = "(thinking)"
		}
	}
	if tools := m.toolNames(); len(tools) > 0 {
		words = strings.TrimSpace(words + " → " + strings.Join(tools, ", "))
	}
	words = m.withImages(words)
	if words == "" && m.ErrorMessage != "" {
		words = "error: " + m.ErrorMessage
	}
	return joinWords(m.Role, words)
}

// withImages is words followed by the count of the message's images,
// "[2 images]", when it has any.
func (m message) withImages(words string) string {
	if n := m.count("image"); n > 0 {
		return strings.TrimSpace(words + " [" + plural(n, "image") + "]")
	}
	return words
}

// joinWords is head, then words after a colon, folded onto one line:
// both may hold session text (a tool's name, a role).
func joinWords(head, words string) string {
	head, words = OneLine(head), OneLine(words)
	if words == "" {
		return head
	}
	return head + ": " + words
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// EntrySummary returns the one-line description of an entry that the tree
// and branch views show: a message's role and first words, or the entry's
// type and what it sets. The text is folded onto one line but not cut.
func EntrySummary(e sessiontree.Entry) string {
	str := func(name string) string { s, _ := e.String(name); return s }
	switch e.Type {
	case sessiontree.TypeMessage:
		raw, ok := e.Field("message")
		if !ok {
			return "message"
		}
		return parseMessage(raw).firstWords()
	case sessiontree.TypeModelChange:
		return "model_change " + OneLine(str("provider")+"/"+str("modelId"))
	case sessiontree.TypeThinkingLevelChange:
		return "thinking_level_change " + OneLine(str("thinkingLevel"))
	case sessiontree.TypeActiveToolsChange:
		var names []string
		if raw, ok := e.Field("activeToolNames"); ok {
			_ = json.Unmarshal(raw, &names)
		}
		if len(names) == 0 {
			return "active_tools_change (none)"
		}
		return "active_tools_change " + OneLine(strings.Join(names, ", "))
	case sessiontree.TypeCompaction:
		return joinWords("compaction", str("summary"))
	case sessiontree.TypeBranchSummary:
		return joinWords("branch_summary", str("summary"))
	case sessiontree.TypeCustom:
		return OneLine("custom " + str("customType"))
	case sessiontree.TypeCustomMessage:
		m := message{}
		m.Content, _ = e.Field("content")
		m.parseContent()
		return joinWords("custom_message "+str("customType"), m.withImages(m.texts()))
	case sessiontree.TypeLabel:
		target := ShortID(e.TargetID())
		if l := sessiontree.LabelOf(e); l != "" {
			return fmt.Sprintf("label %s: %s", target, OneLine(l))
		}
		return fmt.Sprintf("label %s cleared", target)
	case sessiontree.TypeSessionInfo:
		if n := sessiontree.NameOf(e); n != "" {
			return "session_info name: " + OneLine(n)
		}
		return "session_info name cleared"
	case sessiontree.TypeLeaf:
		if t := e.TargetID(); t != "" {
			return "leaf → " + ShortID(t)
		}
		return "leaf → root"
	case sessiontree.TypeContextEdit:
		return contextEditSummary(e)
	case sessiontree.TypeUsage:
		s := joinWords("usage", OneLine(str("kind")+" "+str("provider")+"/"+str("model")))
		if raw, ok := e.Field("usage"); ok {
			if u, ok := sessiontree.UsageFromJSON(raw); ok {
				s += fmt.Sprintf(" (%s tokens, $%.4f)", Count(u.Tokens()), u.Cost)
			}
		}
		return s
	}
	return OneLine(string(e.Type))
}

// contextEditSummary describes a context_edit: its target and what it
// does, "omit" or the first words of the replacement.
func contextEditSummary(e sessiontree.Entry) string {
	edit, ok := sessiontree.ContextEditOf(e)
	if !ok {
		return "context_edit (no effect)"
	}
	head := "context_edit " + ShortID(edit.TargetID)
	if edit.Omit {
		return head + " omit"
	}
	m := message{Content: edit.Content}
	m.parseContent()
	if words := m.texts(); words != "" {
		return joinWords(head+" replace", words)
	}
	return head + " replace"
}
