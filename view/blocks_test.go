package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/view"
)

// blocksSession is testdata/pi16-blocks.jsonl: what pi 1.6.0 writes
// beyond plain text (pi-ai's and pi's message types): a blank
// thinking block (encrypted reasoning), a tool call whose arguments were not JSON (pi keeps
// arguments {} and the text the model sent in argumentsError), a bash
// command run with "!!" (excludeFromContext: the model never sees it) and
// one whose output was cut (truncated, fullOutputPath: the model reads
// "[Output truncated. Full output: …]").
const blocksSession = "testdata/pi16-blocks.jsonl"

// allViews renders a session file (blocksSession unless told) as the
// context transcript, Markdown and HTML.
func allViews(t *testing.T, file ...string) map[string]string {
	t.Helper()
	path := blocksSession
	if len(file) > 0 {
		path = file[0]
	}
	st := load(t, path)
	c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(context.Background(), sessiontree.ContextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := view.WriteTranscript(&buf, c); err != nil {
		t.Fatal(err)
	}
	s := loadShare(t, st)
	return map[string]string{"context": buf.String(), "markdown": markdown(t, s, view.MarkdownOptions{}), "html": page(t, s)}
}

// TestViewsShowToolCallArgumentsError: a tool call whose arguments the
// model sent as broken JSON has arguments {} and the text in
// argumentsError. Every view showed "{}" alone, as if the model had
// called the tool without arguments.
func TestViewsShowToolCallArgumentsError(t *testing.T) {
	t.Parallel()
	for name, out := range allViews(t) {
		if !strings.Contains(out, "Received arguments:") || !strings.Contains(out, "a.go") {
			t.Errorf("%s: the arguments the model sent (argumentsError) are missing:\n%s", name, out)
		}
	}
}

// TestViewsShowBashAsTheModelSeesIt: pi sends the model a bash command's
// truncation note with the path of its full output, and never sends a
// command run with "!!" (excludeFromContext). The views dropped the note
// and showed the excluded command like any other.
func TestViewsShowBashAsTheModelSeesIt(t *testing.T) {
	t.Parallel()
	for name, out := range allViews(t) {
		if !strings.Contains(out, "[Output truncated. Full output: /tmp/pi-bash-1.log]") {
			t.Errorf("%s: the truncation note is missing:\n%s", name, out)
		}
		if n := strings.Count(out, "not sent to the model"); n != 1 {
			t.Errorf("%s: %d marks \"not sent to the model\"; want 1, on the command run with !!:\n%s", name, n, out)
		}
	}
}

// TestTranscriptSkipsBlankThinking: a thinking block with no text (an
// OpenAI reasoning item without summary: only its encrypted payload, in
// thinkingSignature) showed as an empty "thinking:" line; Markdown, HTML
// and pi's own export leave it out.
func TestTranscriptSkipsBlankThinking(t *testing.T) {
	t.Parallel()
	if out := allViews(t)["context"]; strings.Contains(out, "\nthinking:") {
		t.Errorf("context: a blank thinking line:\n%s", out)
	}
}

// TestViewsKeepMessagesWithOddFields: a message with a field of an
// unexpected type (a tool result's "isError": 0, an assistant's "model"
// as a list, as another writer or a hand edit may leave them) vanished
// from every view, shown as a bare "message": decoding gave up on the
// whole message for one field. pi shows such a message's content, and
// sends it to the model.
func TestViewsKeepMessagesWithOddFields(t *testing.T) {
	t.Parallel()
	for name, out := range allViews(t, "testdata/odd-fields.jsonl") {
		for _, want := range []string{"file body", "done"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q is missing:\n%s", name, want, out)
			}
		}
	}
}

// TestTranscriptShowsSystemPrompt: `context` showed a system message (the
// snapshot a compaction keeps, the prompt pi 1.6.0 writes) as a bare
// "[system]" header: its prompt sections and tools, the whole of what the
// model is told, were left out. pi renders the sections after the
// content (getSystemMessageText).
func TestTranscriptShowsSystemPrompt(t *testing.T) {
	t.Parallel()
	out := allViews(t, fixtures["pi1-real-00"])["context"]
	for _, want := range []string{"Section preamble: You are a coding assistant working in the user's project.", "Section rules:\n  <rules>\n  - Be concise", "Tools added: read, bash, edit, write"} {
		if !strings.Contains(out, want) {
			t.Errorf("context: %q is missing:\n%s", want, out[:min(len(out), 2000)])
		}
	}
}

// TestImageFilesWritesAnImageOnce: ImageFiles names an image by a hash of
// its bytes "so that an image met twice is written once", yet it wrote
// the file again at every meeting (a screenshot pasted into twenty
// messages was written twenty times). The test marks the file after the
// first write: a second write would replace the mark.
func TestImageFilesWritesAnImageOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	save := view.ImageFiles(dir, "img")
	img := view.Image{MimeType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nbytes")}
	first, err := save(img)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, path.Base(first))
	if err := os.WriteFile(file, []byte("mark"), 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := save(img)
	if err != nil || second != first {
		t.Fatalf("second link %q, %v; want %q", second, err, first)
	}
	if b, _ := os.ReadFile(file); string(b) != "mark" {
		t.Errorf("the image was written again")
	}
}

// TestEntrySummaryCountsImages: the one-line summary of tree, branch and
// log says "[n images]" of a user or assistant message, but said nothing
// of the images of a tool result (a screenshot tool's answer) or a
// custom message: an image-only tool result read "toolResult screenshot",
// as if it had returned nothing.
func TestEntrySummaryCountsImages(t *testing.T) {
	t.Parallel()
	img := map[string]any{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
	tests := []struct {
		msg  map[string]any
		want string
	}{
		{map[string]any{"role": "toolResult", "toolName": "screenshot", "content": []any{img}}, "toolResult screenshot: [1 image]"},
		{map[string]any{"role": "toolResult", "toolName": "look", "isError": true, "content": []any{map[string]any{"type": "text", "text": "two"}, img, img}}, "toolResult look (error): two [2 images]"},
		{map[string]any{"role": "custom", "customType": "snap", "content": []any{img}}, "custom snap: [1 image]"},
		{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "see"}, img}}, "user: see [1 image]"},
	}
	for _, tt := range tests {
		raw, err := json.Marshal(map[string]any{"type": "message", "id": "a", "parentId": nil, "timestamp": "2026-03-01T10:00:00.000Z", "message": tt.msg})
		if err != nil {
			t.Fatal(err)
		}
		e, err := sessiontree.DecodeEntry(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := view.EntrySummary(e); got != tt.want {
			t.Errorf("EntrySummary = %q; want %q", got, tt.want)
		}
	}
}

// TestSharedPagesShowRetainedTail: a compaction of the newer harness
// keeps the last messages inline (retainedTail) instead of naming the
// first kept entry; the model reads them after the summary. Markdown and
// HTML showed the summary alone, the kept messages nowhere.
func TestSharedPagesShowRetainedTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := load(t, "testdata/demo.jsonl")
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	tail := []json.RawMessage{
		json.RawMessage(`{"role":"user","content":"kept question","timestamp":1}`),
		json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"kept answer"}],"provider":"p","model":"m","timestamp":2}`),
	}
	if _, err := s.AppendCompaction(ctx, sessiontree.Compaction{Summary: "the summary", RetainedTail: tail, TokensBefore: 5}); err != nil {
		t.Fatal(err)
	}
	sh := loadShare(t, st)
	for name, out := range map[string]string{"markdown": markdown(t, sh, view.MarkdownOptions{}), "html": page(t, sh)} {
		for _, want := range []string{"kept question", "kept answer", "keeps 2 messages"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q is missing", name, want)
			}
		}
	}
}
