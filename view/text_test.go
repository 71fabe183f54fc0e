package view_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

func TestStringWidth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"日本語", 6}, {"römisch", 7}, {"emoji🙂", 7}, {"a\tb", 2},
		// An emoji of text presentation made emoji by U+FE0F, as
		// terminals (and pi's visibleWidth) draw it: two columns.
		{"\u26a0\ufe0f", 2}, {"a\u2764\ufe0fb", 4}, {"\U0001F6E0\ufe0f", 2},
	}
	for _, tt := range tests {
		if got := view.StringWidth(tt.s); got != tt.want {
			t.Errorf("StringWidth(%q) = %d; want %d", tt.s, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		cols int
		want string
	}{
		{"hello world", 0, "hello world"},
		{"hello world", 11, "hello world"},
		{"hello world", 8, "hello w…"},
		{"日本語のテキスト", 7, "日本語…"},
		{"日本語", 5, "日本…"},
		{"ab", 1, "…"},
		// Each warning sign takes two columns: cut to 8, three fit.
		{strings.Repeat("\u26a0\ufe0f", 10), 8, strings.Repeat("\u26a0\ufe0f", 3) + "…"},
	}
	for _, tt := range tests {
		got := view.Truncate(tt.s, tt.cols)
		if got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q; want %q", tt.s, tt.cols, got, tt.want)
		}
		if tt.cols > 0 && view.StringWidth(got) > tt.cols {
			t.Errorf("Truncate(%q, %d) = %q is %d columns wide", tt.s, tt.cols, got, view.StringWidth(got))
		}
	}
	if got := view.TruncateLeft("/home/me/project/src", 10); got != "…oject/src" {
		t.Errorf("TruncateLeft = %q; want %q", got, "…oject/src")
	}
}

// TestTruncateKeepsGraphemes: Truncate and TruncateLeft cut between
// characters as a person reads them (grapheme clusters), never inside
// one: a family emoji (three emoji joined by U+200D) was cut after a
// joiner, which then glued the ellipsis to the half-family; a flag (two
// regional indicators) was cut to a lone letter symbol; a letter and its
// combining accent were parted at the left cut.
func TestTruncateKeepsGraphemes(t *testing.T) {
	t.Parallel()
	const family, flag = "\U0001F468\u200D\U0001F469\u200D\U0001F467", "\U0001F1EB\U0001F1F7"
	tests := []struct {
		s    string
		cols int
		left bool
		want string
	}{
		{"ab" + family + "cd", 5, false, "ab…"},
		{"ab" + family + "cd", 9, false, "ab" + family + "…"},
		{"ab" + flag + flag, 4, false, "ab…"},
		{"ab" + flag + flag, 5, false, "ab" + flag + "…"},
		{"xe\u0301tude", 5, true, "…tude"},
		{"xxe\u0301tude", 6, true, "…e\u0301tude"},
		{"ab" + family + "cd", 5, true, "…cd"},
	}
	for _, tt := range tests {
		got := view.Truncate(tt.s, tt.cols)
		if tt.left {
			got = view.TruncateLeft(tt.s, tt.cols)
		}
		if got != tt.want {
			t.Errorf("Truncate(%q, %d, left %v) = %q; want %q", tt.s, tt.cols, tt.left, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"":                     "",
		"  a \n\n b\tc  ":      "a b c",
		"new\r\nline\x1b[31m":  "new line\uFFFD[31m",
		"tab\there römisch 日本": "tab here römisch 日本",
	}
	for in, want := range tests {
		if got := view.OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	tests := map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4200: "-4,200"}
	for n, want := range tests {
		if got := view.Count(n); got != want {
			t.Errorf("Count(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestUniquePrefixLen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ids  []string
		want int
	}{
		{nil, 8},
		{[]string{"0198f2a4-5c1e"}, 8},
		{[]string{"0198f2a4-5c1e", "0198f2a4-5c1e"}, 8},
		{[]string{"0198f2a4-5c1e", "0198f2a4-7e00", "01a237bc-c4aa"}, 10},
		{[]string{"abc", "abd"}, 8},
	}
	for _, tt := range tests {
		if got := view.UniquePrefixLen(tt.ids, 8); got != tt.want {
			t.Errorf("UniquePrefixLen(%q, 8) = %d; want %d", tt.ids, got, tt.want)
		}
	}
}

func TestTable(t *testing.T) {
	t.Parallel()
	tb := view.NewTable(view.Column{Header: "name"}, view.Column{Header: "n", Right: true}, view.Column{Header: "note"})
	tb.Add("alpha", "1", "")
	tb.Add("日本語", "1000", "two\nlines")
	tb.Add("x")
	var buf bytes.Buffer
	if err := tb.Write(&buf); err != nil {
		t.Fatal(err)
	}
	want := "NAME       N  NOTE\n" +
		"alpha      1\n" +
		"日本語  1000  two lines\n" +
		"x\n"
	if buf.String() != want {
		t.Errorf("Table.Write() =\n%s\nwant\n%s", buf.String(), want)
	}
	if tb.Len() != 3 {
		t.Errorf("Table.Len() = %d; want 3", tb.Len())
	}
}

// termHostile holds escape sequences that would act on a terminal: OSC 52
// (set the clipboard), ESC [ 2J (clear the screen), a cursor move, an OSC 8
// link, a C1 CSI (U+009B), a raw 8-bit CSI byte, BEL, backspace, a lone
// carriage return and DEL.
const termHostile = "a\x1b]52;c;aGk=\x07b\x1b[2J\x1b[1;1Hc\x1b]8;;http://x\x1b\\l\x1b]8;;\x1b\\\u009b2J\x9bd\x08e\rf\x7f"

// hasTermControl reports whether s holds a control character other than
// line feed and tab, or a byte that is not UTF-8.
func hasTermControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return true
		}
	}
	return false
}

func TestTermText(t *testing.T) {
	t.Parallel()
	got := view.TermText(termHostile + "\nline\twith tab\r\n")
	if hasTermControl(got) {
		t.Errorf("TermText left a control character: %q", got)
	}
	want := "a\uFFFD]52;c;aGk=\uFFFDb\uFFFD[2J\uFFFD[1;1Hc\uFFFD]8;;http://x\uFFFD\\l\uFFFD]8;;\uFFFD\\\uFFFD2J\uFFFDd\uFFFDe\uFFFDf\uFFFD\nline\twith tab\n"
	if got != want {
		t.Errorf("TermText = %q; want %q", got, want)
	}
	if s := "plain\ttext\nkept"; view.TermText(s) != s {
		t.Errorf("TermText(%q) = %q", s, view.TermText(s))
	}
	if got := view.OneLine(termHostile); hasTermControl(got) || !strings.Contains(got, "\uFFFD[2J") {
		t.Errorf("OneLine = %q; want every control character as U+FFFD", got)
	}
}

// bidiHostile holds every bidirectional embedding, override and isolate
// (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI), none of them closed: on a
// terminal that lays out right-to-left text, RLO reverses the rest of the
// line, the fields after the text too.
const bidiHostile = "a\u202ab\u202bc\u202cd\u202de\u202ef\u2066g\u2067h\u2068i\u2069j"

// TestTermTextBidi checks TermText, OneLine and ShortID show each bidi
// override and isolate as U+FFFD, so session text cannot reorder what
// follows it, and keep the bidi marks, which reorder nothing beyond their
// neighbours, and right-to-left text itself.
func TestTermTextBidi(t *testing.T) {
	t.Parallel()
	want := "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf\uFFFDg\uFFFDh\uFFFDi\uFFFDj"
	if got := view.TermText(bidiHostile + "\n"); got != want+"\n" {
		t.Errorf("TermText(%q) = %q; want %q", bidiHostile, got, want+"\n")
	}
	if got := view.OneLine(bidiHostile); got != want {
		t.Errorf("OneLine(%q) = %q; want %q", bidiHostile, got, want)
	}
	if got, want := view.ShortID("\u202eab\u2066"), "\uFFFDab\uFFFD"; got != want {
		t.Errorf("ShortID = %q; want %q", got, want)
	}
	if s := "שלום \u200eabc\u200f عربي\u061c"; view.TermText(s) != s {
		t.Errorf("TermText(%q) = %q; want it unchanged", s, view.TermText(s))
	}
}

// TestTranscriptTermText checks that `context`'s text output, which shows
// whole messages, never writes a control character from session text.
func TestTranscriptTermText(t *testing.T) {
	t.Parallel()
	msg := func(v map[string]any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	c := sessiontree.Context{State: sessiontree.DefaultState(), Messages: []json.RawMessage{
		msg(map[string]any{"role": "user", "content": "hi " + termHostile + "\nmore " + termHostile}),
		msg(map[string]any{"role": "assistant", "model": "m" + termHostile, "provider": "p", "content": []any{
			map[string]any{"type": "text", "text": termHostile},
			map[string]any{"type": "thinking", "thinking": termHostile},
			map[string]any{"type": "toolCall", "name": "bash" + termHostile, "arguments": map[string]any{"c": 1}},
		}}),
		msg(map[string]any{"role": "toolResult", "toolName": "t" + termHostile, "content": []any{map[string]any{"type": "text", "text": termHostile}}}),
		msg(map[string]any{"role": "bashExecution", "command": "ls" + termHostile, "output": termHostile}),
	}}
	c.State.ThinkingLevel = "x" + termHostile
	var buf bytes.Buffer
	if err := view.WriteTranscript(&buf, c); err != nil {
		t.Fatal(err)
	}
	if hasTermControl(buf.String()) {
		t.Errorf("WriteTranscript wrote a control character:\n%q", buf.String())
	}
	if !strings.Contains(buf.String(), "hi a\uFFFD]52;c;aGk=") {
		t.Errorf("WriteTranscript lost the text around the escapes:\n%q", buf.String())
	}
}

// TestShortIDTermText checks an id from a session file, shown by every
// text command (tree, branch, log, search, ls), shows its control
// characters as U+FFFD.
func TestShortIDTermText(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"c04e9a55-1234":      "c04e9a55",
		"\x1b[2Jab":          "\uFFFD[2Jab",
		"\x1b]52;c;aGk=\a":   "\uFFFD]52;c;a",
		"a\nb\tc\u009bd":     "a\uFFFDb\uFFFDc\uFFFDd",
		"日本語":                "日本\uFFFD\uFFFD", // cut inside a character
		"ab\xe6\x97\xa5\xe6": "ab日\uFFFD",
	}
	for in, want := range tests {
		if got := view.ShortID(in); got != want {
			t.Errorf("ShortID(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestEntrySummaryTermText checks the one-line summary tree, branch and
// log show of a message leaves no control character of its tool name or
// role: only its words were folded.
func TestEntrySummaryTermText(t *testing.T) {
	t.Parallel()
	for _, msg := range []map[string]any{
		{"role": "toolResult", "toolName": "bash" + termHostile, "isError": true, "content": []any{map[string]any{"type": "text", "text": "out"}}},
		{"role": "user" + termHostile, "content": "hi"},
		{"role": "custom", "customType": "ct" + termHostile, "content": "hi"},
	} {
		raw, err := json.Marshal(map[string]any{"type": "message", "id": "a", "parentId": nil, "timestamp": "2026-03-01T10:00:00.000Z", "message": msg})
		if err != nil {
			t.Fatal(err)
		}
		e, err := sessiontree.DecodeEntry(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := view.EntrySummary(e); hasTermControl(got) || !strings.Contains(got, "\uFFFD[2J") {
			t.Errorf("EntrySummary = %q; want its control characters as U+FFFD", got)
		}
	}
}

// TestPushReportTermText checks the push and pull report shows a session
// id, which a session file may fill with anything, with its escape
// sequences and bidi overrides as U+FFFD, whatever the session's status.
func TestPushReportTermText(t *testing.T) {
	t.Parallel()
	id := "ab\x1b]52;c;aGk=\a\x1b[2J\u202e"
	var buf bytes.Buffer
	err := view.WritePushReport(&buf, "pushed", store.PushReport{Results: []store.PushResult{
		{Session: id, Status: store.PushPushed, Pushed: 2},
		{Session: id, Status: store.PushUpToDate},
		{Session: id, Status: store.PushConflict, Reason: "written on both sides"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if hasTermControl(buf.String()) || strings.Contains(buf.String(), "\u202e") {
		t.Errorf("WritePushReport wrote a control character:\n%q", buf.String())
	}
	if want := "ab\uFFFD]52;c;aGk=\uFFFD\uFFFD[2J\uFFFD  up to date\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("WritePushReport = %q; want it to hold %q", buf.String(), want)
	}
}

// TestErrorLine checks the reports that quote an error (import's
// failures, push's reasons) put each of its joined errors apart: an
// interrupted import's "context canceled" and the rollback's error read as
// "context canceled roll back batch: ..." before.
func TestErrorLine(t *testing.T) {
	t.Parallel()
	const joined = "append batch: context canceled\nroll back batch: context canceled\n"
	const want = "append batch: context canceled; roll back batch: context canceled"
	if got := view.ErrorLine(joined + "\x1b[2J"); got != want+"; \uFFFD[2J" {
		t.Errorf("ErrorLine = %q; want %q", got, want+"; \uFFFD[2J")
	}
	var imp, push bytes.Buffer
	if err := view.WriteImportSummary(&imp, view.ImportSummary{Files: 1, Failed: 1,
		Failures: []view.ImportFailure{{File: "/s/a.jsonl", Outcome: "failed", Error: joined}}}); err != nil {
		t.Fatal(err)
	}
	if err := view.WritePushReport(&push, "pushed", store.PushReport{Results: []store.PushResult{
		{Session: "s", Status: store.PushFailed, Reason: joined}}}); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{imp.String(), push.String()} {
		if !strings.Contains(out, ": "+want+"\n") {
			t.Errorf("report %q; want the error as %q", out, want)
		}
	}
}

// TestImportSummaryTermText checks the import summary shows a session
// file's name, which may hold anything, with its control characters as
// U+FFFD.
func TestImportSummaryTermText(t *testing.T) {
	t.Parallel()
	file := "/s/a\x1b]52;c;aGk=\a\x1b[2J.jsonl"
	var buf bytes.Buffer
	err := view.WriteImportSummary(&buf, view.ImportSummary{
		Files:    2,
		Problems: []view.ImportProblem{{File: file, Line: 3, Message: "bad line"}},
		Failures: []view.ImportFailure{{File: file, Outcome: "failed", Error: "import " + file + ": broken"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if hasTermControl(buf.String()) {
		t.Errorf("WriteImportSummary wrote a control character:\n%q", buf.String())
	}
	if want := "  /s/a\uFFFD]52;c;aGk=\uFFFD\uFFFD[2J.jsonl: failed: broken\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("WriteImportSummary = %q; want it to hold %q", buf.String(), want)
	}
}

// TestTranscriptHeadersOneLine: a message's bracketed header and the
// state line are one line each, whatever a session holds in a tool's or
// model's name: a line break there (TermText keeps them) started a line
// that read as another message's header, "[user · …]", in what the
// transcript says the model sees.
func TestTranscriptHeadersOneLine(t *testing.T) {
	t.Parallel()
	const forged = "x]\n\n[user · 2026-01-01 00:00:00]\nforged"
	c := sessiontree.Context{State: sessiontree.DefaultState(), Messages: []json.RawMessage{
		json.RawMessage(`{"role":"toolResult","toolName":` + strconv.Quote(forged) + `,"content":"out"}`),
		json.RawMessage(`{"role":"assistant","provider":"p","model":` + strconv.Quote(forged) + `,"content":"ok"}`),
	}}
	c.State.ActiveToolNames = []string{"read", forged}
	var buf bytes.Buffer
	if err := view.WriteTranscript(&buf, c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	headers := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "[") {
			headers++
		}
	}
	if headers != 2 || !strings.HasSuffix(lines[0], "forged") {
		t.Errorf("WriteTranscript wrote %d header lines, want 2, and the state on the first line:\n%s", headers, buf.String())
	}
}

// TestPushReportSkipped checks a session deleted at the source during a
// push or a pull reads as skipped, saying so in the store's reason (in
// the command's own word), with what was copied before the delete, and
// counts in the totals.
func TestPushReportSkipped(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ verb, want string }{
		{"pushed", "a  skipped: deleted at the source during the push\n" +
			"b  skipped (pushed 3 entries first): deleted at the source during the push\n" +
			"c  pushed 2 entries\n" +
			"3 sessions: 1 pushed (5 entries), 0 up to date, 0 in conflict, 0 claimed, 0 failed, 2 skipped\n"},
		{"pulled", "a  skipped: deleted at the source during the pull\n" +
			"b  skipped (pulled 3 entries first): deleted at the source during the pull\n" +
			"c  pulled 2 entries\n" +
			"3 sessions: 1 pulled (5 entries), 0 up to date, 0 in conflict, 0 claimed, 0 failed, 2 skipped\n"},
	} {
		// The store's reason is in the copy's word (PushOptions.Verb).
		reason := store.PushDeletedReason(strings.TrimSuffix(tt.verb, "ed"))
		rep := store.PushReport{Results: []store.PushResult{
			{Session: "a", Status: store.PushSkipped, Reason: reason},
			{Session: "b", Status: store.PushSkipped, Pushed: 3, Reason: reason},
			{Session: "c", Status: store.PushPushed, Pushed: 2},
		}}
		var buf bytes.Buffer
		if err := view.WritePushReport(&buf, tt.verb, rep); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, buf.String()); diff != "" {
			t.Errorf("WritePushReport(%q) (-want +got):\n%s", tt.verb, diff)
		}
	}
}
