package view

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// JSONOptions tune JSON output.
type JSONOptions struct {
	// Indent indents the document by two spaces per level (for people
	// reading it on a terminal); otherwise it is compact.
	Indent bool
}

// emit writes one JSON document built by fill, followed by a newline.
func emit(w io.Writer, opts JSONOptions, fill func(buf *bytes.Buffer) error) error {
	var buf bytes.Buffer
	if err := fill(&buf); err != nil {
		return err
	}
	out := UTF8JSON(buf.Bytes())
	if opts.Indent {
		var ind bytes.Buffer
		ind.Grow(len(out) * 2)
		if err := json.Indent(&ind, out, "", "  "); err != nil {
			return fmt.Errorf("indent json: %w", err)
		}
		out = ind.Bytes()
	}
	out = append(out, '\n')
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// UTF8JSON returns JSON b as UTF-8, which JSON text must be: an entry is
// stored as it came, and a session file may hold bytes that are not UTF-8
// inside its strings, which a strict reader refuses (Python's json.load).
// Each maximal part of a sequence that is not UTF-8 becomes U+FFFD, as
// Node decodes a file (the WHATWG decoder), so the text is what pi reads
// there. b itself is returned when it is UTF-8 already.
func UTF8JSON(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+len(b)/8)
	start := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		if r, n := utf8.DecodeRune(b[i:]); r != utf8.RuneError || n > 1 {
			i += n
			continue
		}
		out = append(append(out, b[start:i]...), "\uFFFD"...)
		i += invalidPrefix(b[i:])
		start = i
	}
	return append(out, b[start:]...)
}

// invalidPrefix is the length of the maximal part of a UTF-8 sequence
// that b, which does not start with a valid one, starts with: a lead byte
// and the continuation bytes in range after it (at least 1), the bytes
// the WHATWG decoder turns into one U+FFFD.
func invalidPrefix(b []byte) int {
	lo, hi := byte(0x80), byte(0xbf)
	need := 0
	switch c := b[0]; {
	case c >= 0xc2 && c <= 0xdf:
		need = 1
	case c == 0xe0:
		need, lo = 2, 0xa0
	case c == 0xed:
		need, hi = 2, 0x9f
	case c >= 0xe1 && c <= 0xef:
		need = 2
	case c == 0xf0:
		need, lo = 3, 0x90
	case c == 0xf4:
		need, hi = 3, 0x8f
	case c >= 0xf1 && c <= 0xf3:
		need = 3
	}
	n := 1
	for n <= need && n < len(b) && b[n] >= lo && b[n] <= hi {
		n++
		lo, hi = 0x80, 0xbf
	}
	return n
}

// WriteJSON writes v as one JSON document followed by a newline. HTML
// characters are not escaped: the output is for terminals and scripts.
func WriteJSON(w io.Writer, v any, opts JSONOptions) error {
	return emit(w, opts, func(buf *bytes.Buffer) error {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encode json: %w", err)
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline; emit adds its own
		return nil
	})
}

// WriteEntriesJSON writes entries as a JSON array of their raw objects.
func WriteEntriesJSON(w io.Writer, entries []sessiontree.Entry, opts JSONOptions) error {
	return emit(w, opts, func(buf *bytes.Buffer) error {
		buf.WriteByte('[')
		for i, e := range entries {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(e.Raw)
		}
		buf.WriteByte(']')
		return nil
	})
}

// WriteTreeJSON writes the session's tree as pi orders it
// ([sessiontree.BuildTree]): an array of root nodes, each
// {"entry": <entry>, "label": <label>, "labelTimestamp": <the time of the
// label entry that set it>, "children": [...]}, label and labelTimestamp
// omitted when the entry has no label, as pi's getTree gives them.
// It writes iteratively, so a session thousands of entries deep is fine.
func WriteTreeJSON(ctx context.Context, w io.Writer, st sessiontree.Storage, opts JSONOptions) error {
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		return err // the storage names the read
	}
	labels, err := st.Labels(ctx)
	if err != nil {
		return fmt.Errorf("read labels: %w", err)
	}
	return WriteTreeNodesJSON(w, sessiontree.BuildTree(log, labels), opts)
}

// WriteTreeNodesJSON writes tree nodes as [WriteTreeJSON] does. The output
// decodes to the same value as encoding/json's for the same nodes, without
// its recursion, and keeps each entry's raw bytes (encoding/json would
// escape "<", ">" and "&" inside them).
func WriteTreeNodesJSON(w io.Writer, roots []*sessiontree.TreeNode, opts JSONOptions) error {
	return emit(w, opts, func(buf *bytes.Buffer) error {
		type frame struct {
			nodes []*sessiontree.TreeNode
			next  int
		}
		buf.WriteByte('[')
		stack := []frame{{nodes: roots}}
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(f.nodes) {
				stack = stack[:len(stack)-1]
				buf.WriteByte(']')
				if len(stack) > 0 {
					buf.WriteByte('}') // the node whose children these were
				}
				continue
			}
			if f.next > 0 {
				buf.WriteByte(',')
			}
			n := f.nodes[f.next]
			f.next++
			buf.WriteString(`{"entry":`)
			if len(n.Entry.Raw) == 0 {
				buf.WriteString("null")
			} else {
				buf.Write(n.Entry.Raw)
			}
			if n.Label != "" {
				buf.WriteString(`,"label":`)
				buf.Write(quote(n.Label))
			}
			if n.LabelTimestamp != "" {
				buf.WriteString(`,"labelTimestamp":`)
				buf.Write(quote(n.LabelTimestamp))
			}
			buf.WriteString(`,"children":[`)
			stack = append(stack, frame{nodes: n.Children})
		}
		return nil
	})
}

// quote returns s as a JSON string, HTML characters unescaped.
func quote(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// ContextJSON is what `sessiontree context --json` prints: the context's
// keys ({"messages", "thinkingLevel", "model", "activeToolNames"}) and,
// when Projection is set, "projection": per context entry, the messages it
// contributes ([sessiontree.Projected], pi 1.6.0's buildSessionProjection
// as [{"sourceId", "messages"}]). Use [NewContextJSON] to set it.
type ContextJSON struct {
	sessiontree.Context
	// Projection is omitted when nil; an empty projection (of an empty
	// session) is written [].
	Projection *sessiontree.Projected `json:"projection,omitempty"`
}

// NewContextJSON returns the JSON of c with its projection p, or without
// one when p is nil.
func NewContextJSON(c sessiontree.Context, p sessiontree.Projected) ContextJSON {
	out := ContextJSON{Context: c}
	if p != nil {
		out.Projection = &p
	}
	return out
}

// WriteContextJSON writes c as [WriteJSON] does, byte for byte, at the
// cost of what it prints: its messages, the JSON of stored entries and so
// valid, are written compacted (jsonx.WriteCompactTrusted) instead of
// being checked a byte at a time by encoding/json, and the document is
// streamed to w rather than built whole first, so a context of inline
// images costs its bytes once. Indented output (a terminal) and a
// projection take WriteJSON's way.
func WriteContextJSON(w io.Writer, c ContextJSON, opts JSONOptions) error {
	if opts.Indent || c.Projection != nil || c.Messages == nil {
		return WriteJSON(w, c, opts)
	}
	// The document without its messages: {"messages":[], then the rest.
	rest := c
	rest.Messages = []json.RawMessage{}
	var tail bytes.Buffer
	enc := json.NewEncoder(&tail)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rest); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	const head = `{"messages":[`
	after, ok := bytes.CutPrefix(tail.Bytes(), []byte(head+`]`))
	if !ok {
		return WriteJSON(w, c, opts)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(head)
	for i, m := range c.Messages {
		if i > 0 {
			bw.WriteByte(',')
		}
		_ = jsonx.WriteCompactTrusted(bw, UTF8JSON(m)) // bw keeps its error for Flush
	}
	bw.WriteByte(']')
	bw.Write(after) // ends with Encode's newline
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// LoadContextJSON builds what `sessiontree context --json` prints: the
// context at entry from (the leaf when ""), with its projection when
// projection is set ([] for an empty session).
func LoadContextJSON(ctx context.Context, st sessiontree.Storage, from string, projection bool) (ContextJSON, error) {
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	opts := sessiontree.ContextOptions{From: from}
	c, err := s.Context(ctx, opts)
	if err != nil {
		return ContextJSON{}, err
	}
	if !projection {
		return NewContextJSON(c, nil), nil
	}
	p, err := s.Projection(ctx, opts)
	if err != nil {
		return ContextJSON{}, err
	}
	if p == nil {
		p = sessiontree.Projected{}
	}
	return NewContextJSON(c, p), nil
}

// LoadBranch returns what `sessiontree branch` shows: the path from entry
// from (the leaf when "") to the compaction boundary, or to the root when
// full, root first.
func LoadBranch(ctx context.Context, st sessiontree.Storage, from string, full bool) ([]sessiontree.Entry, error) {
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	if full {
		return s.FullBranch(ctx, from)
	}
	return s.Branch(ctx, from)
}
