package sessiontree_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// mutant is one changed copy of a valid session file.
type mutant struct {
	name   string   // m0042
	source string   // the file it was made from
	path   string   // where sessiontree reads it
	id     string   // its session id, unique among the mutants
	ops    []string // what was changed, in order
	data   []byte
	v1     bool // a version-1 file: pi invents its ids
	probes int  // how many of pi's probes to check

	// What sessiontree answers apart from pi on purpose (mutant.apart).
	innerCR, hugeUsage, labelBeforeTarget, textNotString, nanSiblings, systemOddShape bool
}

// mutation is a file being changed: its lines without their newline,
// and raw JSON texts that placeholders in re-encoded lines stand for.
type mutation struct {
	r       *rand.Rand
	lines   []string
	final   bool // the file ends with a newline
	raw     map[string]string
	ids     int // entries added so far
	headerI int // the header's line
	// hugeUsage is set when a usage number may be beyond ±2^30.
	hugeUsage bool
	// textNotString is set when a text block's text may not be a string.
	textNotString bool
	// systemOddShape is set when a message's sections, toolsAdded or
	// toolsRemoved may be of another shape than pi writes.
	systemOddShape bool
}

// writeMutants makes n mutants of sources with r and writes each to dir.
func writeMutants(t *testing.T, dir string, sources []string, r *rand.Rand, n int) []mutant {
	t.Helper()
	files := map[string][]byte{}
	for _, p := range sources {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = b
	}
	out := make([]mutant, 0, n)
	for len(out) < n {
		src := sources[r.IntN(len(sources))]
		m := mutant{name: fmt.Sprintf("m%04d", len(out)), source: filepath.ToSlash(src)}
		m.id = fmt.Sprintf("mut-%04d", len(out))
		mu := newMutation(r, files[src])
		if !mu.setHeaderID(m.id) {
			continue
		}
		for k := 1 + r.IntN(3); k > 0; k-- {
			m.ops = append(m.ops, mu.apply())
		}
		m.v1 = mu.version() < 2
		if mu.cycle() {
			continue // pi walks a cycle for ever, and sessiontree refuses one in every mode
		}
		m.data = mu.bytes()
		m.innerCR = bytes.Contains(bytes.ReplaceAll(m.data, []byte("\r\n"), nil), []byte("\r"))
		m.hugeUsage = mu.hugeUsage
		m.textNotString = mu.textNotString
		m.systemOddShape = mu.systemOddShape
		m.nanSiblings = mu.nanSiblings()
		m.labelBeforeTarget = mu.labelBeforeTarget()
		m.path = filepath.Join(dir, m.name+".jsonl")
		if err := os.WriteFile(m.path, m.data, 0o644); err != nil {
			t.Fatal(err)
		}
		m.probes = 6
		out = append(out, m)
	}
	return out
}

func newMutation(r *rand.Rand, data []byte) *mutation {
	mu := &mutation{r: r, raw: map[string]string{}}
	s := string(data)
	mu.final = strings.HasSuffix(s, "\n")
	mu.lines = strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range mu.lines {
		if strings.TrimSpace(l) != "" {
			mu.headerI = i
			break
		}
	}
	return mu
}

func (mu *mutation) bytes() []byte {
	s := strings.Join(mu.lines, "\n")
	if mu.final {
		s += "\n"
	}
	for k, v := range mu.raw {
		s = strings.ReplaceAll(s, `"`+k+`"`, v)
	}
	return []byte(s)
}

// object parses line i as a JSON object, numbers kept as written; nil
// when it is not one.
func (mu *mutation) object(i int) map[string]any {
	d := json.NewDecoder(strings.NewReader(strings.TrimSuffix(mu.lines[i], "\r")))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil || d.More() {
		return nil
	}
	return m
}

// set writes obj as line i, keeping a CR the line ended with.
func (mu *mutation) set(i int, obj map[string]any) {
	cr := strings.HasSuffix(mu.lines[i], "\r")
	mu.lines[i] = mu.encode(obj)
	if cr {
		mu.lines[i] += "\r"
	}
}

func (mu *mutation) encode(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// rawJSON returns a placeholder string that the file's text replaces
// with text, JSON that Go's encoder would not write (1e400, a lone
// surrogate, -0).
func (mu *mutation) rawJSON(text string) string {
	k := fmt.Sprintf("@@raw%d@@", len(mu.raw))
	mu.raw[k] = text
	return k
}

func (mu *mutation) setHeaderID(id string) bool {
	h := mu.object(mu.headerI)
	if h == nil || h["type"] != "session" {
		return false
	}
	h["id"] = id
	mu.set(mu.headerI, h)
	return true
}

// version is the header's version as pi reads it (header.version ?? 1),
// 3 for one that is not a number, which pi and sessiontree read apart
// anyway.
func (mu *mutation) version() float64 {
	h := mu.object(mu.headerI)
	switch v := h["version"].(type) {
	case nil:
		return 1
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return 3
		}
		return f
	}
	return 3
}

// entries returns the lines that hold entries.
func (mu *mutation) entries() []int {
	var out []int
	for i := range mu.lines {
		if i == mu.headerI {
			continue
		}
		if o := mu.object(i); o != nil && o["type"] != "session" {
			out = append(out, i)
		}
	}
	return out
}

// entryLine is an entry's line and its object.
type entryLine struct {
	i int
	o map[string]any
}

// objects returns the entries' lines with their objects, in file order.
func (mu *mutation) objects() []entryLine {
	var out []entryLine
	for _, i := range mu.entries() {
		out = append(out, entryLine{i, mu.object(i)})
	}
	return out
}

// entryIDs returns the string ids of the entries, in file order.
func (mu *mutation) entryIDs() []string {
	var out []string
	for _, e := range mu.objects() {
		if id, ok := e.o["id"].(string); ok {
			out = append(out, id)
		}
	}
	return out
}

// nanSiblings reports whether three or more entries have one parent and
// one of them a timestamp JavaScript's Date reads as NaN.
func (mu *mutation) nanSiblings() bool {
	kids := map[string][]bool{}
	for _, e := range mu.objects() {
		ts, _ := e.o["timestamp"].(string)
		_, err := sessiontree.ParseTime(ts)
		parent := mu.show(e.o["parentId"]) // any JSON, as a key
		kids[parent] = append(kids[parent], err != nil)
	}
	for _, nan := range kids {
		if len(nan) >= 3 && slices.Contains(nan, true) {
			return true
		}
	}
	return false
}

// labelBeforeTarget reports whether a label entry names an entry that
// is written after it, or itself.
func (mu *mutation) labelBeforeTarget() bool {
	seen := map[string]bool{}
	es := mu.objects()
	for k, e := range es {
		o := e.o
		if target, ok := o["targetId"].(string); ok && o["type"] == "label" && !seen[target] &&
			slices.ContainsFunc(es[k:], func(later entryLine) bool { return later.o["id"] == target }) {
			return true
		}
		if id, ok := o["id"].(string); ok {
			seen[id] = true
		}
	}
	return false
}

// cycle reports whether following parent ids from some entry can come
// back to it, an id written twice with different parents counting as
// both: pi's tree (getTree) then holds one node under two parents, and
// walks such a loop for ever.
func (mu *mutation) cycle() bool {
	parents := map[string][]string{}
	for _, e := range mu.objects() {
		id, _ := e.o["id"].(string)
		p, _ := e.o["parentId"].(string)
		if id != "" && p != "" {
			parents[id] = append(parents[id], p)
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var visit func(id string) bool
	visit = func(id string) bool {
		switch state[id] {
		case onPath:
			return true
		case done:
			return false
		}
		state[id] = onPath
		for _, p := range parents[id] {
			if visit(p) {
				return true
			}
		}
		state[id] = done
		return false
	}
	for id := range parents {
		if visit(id) {
			return true
		}
	}
	return false
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// newID is an id no entry has.
func (mu *mutation) newID() string {
	mu.ids++
	return fmt.Sprintf("mu%02d%04x", mu.ids, mu.r.IntN(1<<16))
}

// refID is an id to point at: an entry's, weighted, or an odd one.
func (mu *mutation) refID() any {
	ids := mu.entryIDs()
	switch k := mu.r.IntN(10); {
	case k < 6 && len(ids) > 0:
		return pick(mu.r, ids)
	case k < 8 && len(ids) > 0:
		return ids[len(ids)-1-mu.r.IntN(min(3, len(ids)))]
	}
	return pick(mu.r, []any{"gone", nil, "", 7, "root"})
}

// lastTime is a timestamp after every entry's, give or take.
func lastTime(mu *mutation) string {
	return fmt.Sprintf("2026-12-31T23:%02d:%02d.%03dZ", 10+mu.ids, mu.r.IntN(60), mu.r.IntN(1000))
}

// rawText is JSON text for oddValue to write as it is.
type rawText string

// oddValues are values of every JSON type for a field.
var oddValues = []any{
	nil, json.Number("0"), json.Number("-1"), json.Number("1.5"), rawText("1e400"),
	rawText("123456789012345678901234567890"), rawText("-0"), true, false, "", "x", []any{},
	map[string]any{}, []any{"x"}, map[string]any{"a": json.Number("1")}, "  spaced  ",
	rawText(`"\ud800lone"`), "nul\u0000byte", "\u2028sep\u2029", "emoji 😀 e\u0301 \u202eRTL",
	rawText("1E2"), json.Number("9007199254740993"),
}

// oddValue is one of oddValues, raw text through a placeholder.
func (mu *mutation) oddValue() any {
	v := pick(mu.r, oddValues)
	if r, ok := v.(rawText); ok {
		return mu.rawJSON(string(r))
	}
	return v
}

// oddTime is a timestamp in another form than pi writes. Not the form
// of JavaScript's toUTCString ("Tue, 01 Dec 2026 10:00:00 GMT"), which
// V8's Date reads and sessiontree.ParseTime does not yet: a known
// disagreement (a built message's timestamp is null).
func (mu *mutation) oddTime() any {
	return pick(mu.r, []any{
		"2026-12-01T10:00:00Z", "2026-12-01T10:00:00.1234567Z", "2026-12-01T12:00:00.000+02:00",
		"2026-12-01", "2026-12-01T10:00Z", "2026-12-01t10:00:00.000z", "2026-12-01 10:00:00.000Z",
		"+002026-12-01T10:00:00.000Z", "2026-12-01T23:59:60.000Z", "2026-13-45T10:00:00.000Z",
		"garbage", "", " 2026-12-01T10:00:00.000Z", "1796119200000", json.Number("1796119200000"),
		"2026-12-01T10:00:00.000-09:30", "275760-09-13T00:00:00.000Z",
		"1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z",
	})
}

// apply makes one change and says what it did.
func (mu *mutation) apply() string {
	ops := []func() string{
		mu.dropLine, mu.dupLine, mu.swapLines, mu.moveLine, mu.tear, mu.blankLines, mu.crlf,
		mu.noFinalNewline, mu.garbageLine, mu.nonObjectLine, mu.innerCR, mu.secondHeader,
		mu.removeField, mu.removeField, mu.retype, mu.retype, mu.retype, mu.unknownType,
		mu.unknownField, mu.timestamp, mu.timestamp, mu.underOddParent, mu.underOddParent,
		mu.label, mu.label, mu.name, mu.name, mu.contextEdit, mu.contextEdit, mu.systemMessage,
		mu.content, mu.content, mu.hugeNumber, mu.unicode, mu.dupKey, mu.header, mu.retarget,
		mu.retarget, mu.knownEntry, mu.knownEntry,
	}
	for {
		if what := pick(mu.r, ops)(); what != "" {
			return what
		}
	}
}

func (mu *mutation) someEntry() (int, map[string]any) {
	es := mu.entries()
	if len(es) == 0 {
		return -1, nil
	}
	i := pick(mu.r, es)
	return i, mu.object(i)
}

func (mu *mutation) insert(at int, line string) {
	mu.lines = append(mu.lines[:at], append([]string{line}, mu.lines[at:]...)...)
}

func (mu *mutation) dropLine() string {
	i, _ := mu.someEntry()
	if i < 0 {
		return ""
	}
	mu.lines = append(mu.lines[:i], mu.lines[i+1:]...)
	return fmt.Sprintf("line %d dropped", i+1)
}

func (mu *mutation) dupLine() string {
	i, _ := mu.someEntry()
	if i < 0 {
		return ""
	}
	at := i + 1
	if mu.r.IntN(2) == 0 {
		at = len(mu.lines)
	}
	mu.insert(at, mu.lines[i])
	return fmt.Sprintf("line %d copied to line %d", i+1, at+1)
}

func (mu *mutation) swapLines() string {
	es := mu.entries()
	if len(es) < 2 {
		return ""
	}
	k := mu.r.IntN(len(es) - 1)
	a, b := es[k], es[k+1]
	mu.lines[a], mu.lines[b] = mu.lines[b], mu.lines[a]
	return fmt.Sprintf("lines %d and %d swapped", a+1, b+1)
}

func (mu *mutation) moveLine() string {
	i, _ := mu.someEntry()
	if i < 0 {
		return ""
	}
	l := mu.lines[i]
	mu.lines = append(mu.lines[:i], mu.lines[i+1:]...)
	mu.lines = append(mu.lines, l)
	return fmt.Sprintf("line %d moved to the end", i+1)
}

// tear cuts a line short: the last (a torn tail) or one in the middle
// (a torn line a later writer ended with a newline).
func (mu *mutation) tear() string {
	i, _ := mu.someEntry()
	if i < 0 {
		return ""
	}
	last := mu.r.IntN(2) == 0
	if last {
		i = len(mu.lines) - 1
	}
	l := mu.lines[i]
	if len(l) < 2 {
		return ""
	}
	mu.lines[i] = l[:1+mu.r.IntN(len(l)-1)]
	if last {
		mu.final = false
		return fmt.Sprintf("last line %d torn", i+1)
	}
	return fmt.Sprintf("line %d torn", i+1)
}

func (mu *mutation) blankLines() string {
	for k := 1 + mu.r.IntN(3); k > 0; k-- {
		mu.insert(1+mu.r.IntN(len(mu.lines)), pick(mu.r, []string{"", " ", "\t", "\r", "\u00a0", "\ufeff", "\u2028", "  \r"}))
	}
	return "blank lines"
}

func (mu *mutation) crlf() string {
	for i, l := range mu.lines {
		if !strings.HasSuffix(l, "\r") {
			mu.lines[i] = l + "\r"
		}
	}
	return "CRLF"
}

func (mu *mutation) noFinalNewline() string {
	mu.final = false
	return "no final newline"
}

func (mu *mutation) garbageLine() string {
	at := 1 + mu.r.IntN(len(mu.lines))
	mu.insert(at, pick(mu.r, []string{"<<<<<<< HEAD", "}", "{", "not json", `{"type":"message"`, `{"a":1}}`, "\x00\x00\x00", `{"type":"message","id":"zz",`}))
	return fmt.Sprintf("garbage at line %d", at+1)
}

func (mu *mutation) nonObjectLine() string {
	at := 1 + mu.r.IntN(len(mu.lines))
	mu.insert(at, pick(mu.r, []string{"null", "0", "false", `""`, "[]", "{}", "1", `"x"`, "true", "[1]", `{"type":null}`}))
	return fmt.Sprintf("non-entry JSON at line %d", at+1)
}

// innerCR puts a CR as white space inside an entry's line: JSON allows
// it, and pi's session list (readline) splits the line there.
func (mu *mutation) innerCR() string {
	i, _ := mu.someEntry()
	if i < 0 {
		return ""
	}
	l := mu.lines[i]
	k := strings.Index(l, `,"`)
	if k < 0 {
		return ""
	}
	mu.lines[i] = l[:k+1] + "\r" + l[k+1:]
	return fmt.Sprintf("CR inside line %d", i+1)
}

func (mu *mutation) secondHeader() string {
	at := 1 + mu.r.IntN(len(mu.lines))
	mu.insert(at, strings.TrimSuffix(mu.lines[mu.headerI], "\r"))
	return fmt.Sprintf("header copied to line %d", at+1)
}

// fieldOf picks a key of obj, or of the message inside it.
func (mu *mutation) fieldOf(obj map[string]any) (map[string]any, string, string) {
	target, where := obj, ""
	if msg, ok := obj["message"].(map[string]any); ok && mu.r.IntN(2) == 0 {
		target, where = msg, "message."
	}
	var keys []string
	for k := range target {
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, "", ""
	}
	slices.Sort(keys)
	k := pick(mu.r, keys)
	return target, k, where + k
}

// changeField changes a field of some entry (or of its message) with
// change, which says what it did.
func (mu *mutation) changeField(change func(obj map[string]any, k, what string) string) string {
	i, obj := mu.someEntry()
	if i < 0 {
		return ""
	}
	target, k, what := mu.fieldOf(obj)
	if target == nil {
		return ""
	}
	did := change(target, k, what)
	mu.set(i, obj)
	return fmt.Sprintf("line %d: %s", i+1, did)
}

func (mu *mutation) removeField() string {
	return mu.changeField(func(obj map[string]any, k, what string) string {
		delete(obj, k)
		return what + " removed"
	})
}

func (mu *mutation) retype() string {
	return mu.changeField(func(obj map[string]any, k, what string) string {
		v := mu.oddValue()
		switch {
		case what == "label" && mu.show(v) == "[]":
			v = "" // pi keeps a label [], and shows it as nothing (documented)
		case what == "message.provider" || what == "message.model":
			v = pick(mu.r, []any{"", " ", "other"}) // sessiontree's ModelRef holds strings (documented)
		}
		obj[k] = v
		if what == "message.sections" || what == "message.toolsAdded" || what == "message.toolsRemoved" {
			mu.systemOddShape = true
		}
		return what + " = " + mu.show(v)
	})
}

func (mu *mutation) show(v any) string {
	s := mu.encode(v)
	for k, r := range mu.raw {
		s = strings.ReplaceAll(s, `"`+k+`"`, r)
	}
	return s
}

func (mu *mutation) unknownType() string {
	i, obj := mu.someEntry()
	if i < 0 {
		return ""
	}
	if mu.r.IntN(2) == 0 {
		obj["type"] = pick(mu.r, []string{"future_thing", "annotation", "Message", "message ", "leaf_marker"})
		mu.set(i, obj)
		return fmt.Sprintf("line %d: type = %q", i+1, obj["type"])
	}
	e := map[string]any{"type": "future_thing", "id": mu.newID(), "parentId": mu.refID(), "timestamp": lastTime(mu),
		"payload": map[string]any{"a": json.Number("1")}}
	if mu.r.IntN(2) == 0 {
		e["message"] = map[string]any{"role": "user", "content": "not a message entry"}
	}
	mu.lines = append(mu.lines, mu.encode(e))
	return fmt.Sprintf("unknown entry appended under %v", e["parentId"])
}

func (mu *mutation) unknownField() string {
	i, obj := mu.someEntry()
	if i < 0 {
		return ""
	}
	target := obj
	if msg, ok := obj["message"].(map[string]any); ok && mu.r.IntN(2) == 0 {
		target = msg
	}
	k := pick(mu.r, []string{"xExtra", "__proto__", "constructor", "meta", "Type", "ID"})
	target[k] = mu.oddValue()
	mu.set(i, obj)
	return fmt.Sprintf("line %d: unknown field %s", i+1, k)
}

func (mu *mutation) timestamp() string {
	i, obj := mu.someEntry()
	if i < 0 {
		return ""
	}
	v := mu.oddTime()
	if msg, ok := obj["message"].(map[string]any); ok && mu.r.IntN(3) == 0 {
		mv := pick(mu.r, []any{json.Number("-1"), json.Number("1.5"), mu.rawJSON("1e300"), "1796119200000", nil, json.Number("0"), v})
		msg["timestamp"] = mv
		mu.set(i, obj)
		return fmt.Sprintf("line %d: message.timestamp = %s", i+1, mu.show(mv))
	}
	obj["timestamp"] = v
	mu.set(i, obj)
	return fmt.Sprintf("line %d: timestamp = %s", i+1, mu.show(v))
}

// underOddParent appends an entry under an entry of any type, or none: a
// leaf moved to an odd place and written to.
func (mu *mutation) underOddParent() string {
	parent := mu.refID()
	if _, ok := parent.(string); !ok && parent != nil {
		parent = nil
	}
	if parent == "" {
		parent = nil
	}
	e := map[string]any{"type": "message", "id": mu.newID(), "parentId": parent, "timestamp": lastTime(mu),
		"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "moved here"}}, "timestamp": json.Number("1798761600000")}}
	if mu.r.IntN(3) == 0 {
		e["type"], e["message"] = "branch_summary", nil
		delete(e, "message")
		e["summary"], e["fromId"] = "left a branch", mu.refID()
	}
	mu.lines = append(mu.lines, mu.encode(e))
	return fmt.Sprintf("%s appended under %v", e["type"], parent)
}

func (mu *mutation) appendEntry(typ string, fields map[string]any) map[string]any {
	ids := mu.entryIDs()
	var parent any
	if len(ids) > 0 {
		parent = ids[len(ids)-1]
	}
	e := map[string]any{"type": typ, "id": mu.newID(), "parentId": parent, "timestamp": lastTime(mu)}
	for k, v := range fields {
		e[k] = v
	}
	at := len(mu.lines)
	if mu.r.IntN(4) == 0 && len(mu.lines) > 2 {
		at = 1 + mu.r.IntN(len(mu.lines)-1) // before entries it may name
		e["parentId"] = nil
	}
	mu.insert(at, mu.encode(e))
	return e
}

func (mu *mutation) label() string {
	target := mu.refID()
	var label any = pick(mu.r, []any{"checkpoint", " spaced ", "", nil, json.Number("5"), true, json.Number("0"), []any{"x"}, map[string]any{}, "\u00a0", "two\nlines"})
	fields := map[string]any{"targetId": target, "label": label}
	if mu.r.IntN(8) == 0 {
		delete(fields, "label")
	}
	if mu.r.IntN(10) == 0 {
		fields["targetId"] = mu.oddValue()
	}
	mu.appendEntry("label", fields)
	return fmt.Sprintf("label %s of %s", mu.show(label), mu.show(fields["targetId"]))
}

func (mu *mutation) name() string {
	var name any = pick(mu.r, []any{"renamed", "  spaced  ", "", nil, "\u0085x\u0085", "\ufeffbom", "two\nlines", "\u3000", "😀", "\u2028x\u00a0"})
	if mu.r.IntN(10) == 0 {
		// pi's getSessionName throws on these (it calls their trim).
		name = pick(mu.r, []any{json.Number("5"), true, []any{"a"}, map[string]any{}})
	}
	fields := map[string]any{"name": name}
	if mu.r.IntN(8) == 0 {
		delete(fields, "name")
	}
	mu.appendEntry("session_info", fields)
	return fmt.Sprintf("name %s", mu.show(name))
}

func (mu *mutation) contextEdit() string {
	var repl any = pick(mu.r, []any{nil, map[string]any{"content": "edited"}, map[string]any{"content": []any{}},
		map[string]any{"content": []any{map[string]any{"type": "text", "text": "edited"}}}, map[string]any{}, "bare",
		map[string]any{"content": json.Number("42")}, map[string]any{"content": nil}, json.Number("7"), []any{}})
	target := mu.refID()
	fields := map[string]any{"targetId": target, "replacement": repl}
	if mu.r.IntN(10) == 0 {
		fields["targetId"] = mu.oddValue()
	}
	e := mu.appendEntry("context_edit", fields)
	if mu.r.IntN(10) == 0 {
		e["targetId"] = e["id"]
	}
	return fmt.Sprintf("context edit of %s: %s", mu.show(fields["targetId"]), mu.show(repl))
}

// knownEntry appends an entry of a type pi writes, a field of it odd at
// times: a compaction, a custom message, a usage record, a model,
// thinking level or tools change.
func (mu *mutation) knownEntry() string {
	usage := map[string]any{"input": json.Number("10"), "output": json.Number("5"), "cacheRead": json.Number("0"), "cacheWrite": json.Number("0"),
		"totalTokens": json.Number("15"), "cost": map[string]any{"total": json.Number("0.001")}}
	kinds := []struct {
		typ    string
		fields map[string]any
	}{
		{"compaction", map[string]any{"summary": "appended summary", "firstKeptEntryId": mu.refID(), "tokensBefore": json.Number("100"),
			"systemMessage": map[string]any{"role": "system", "content": "snap", "sections": map[string]any{"a": "A"}, "timestamp": json.Number("1")}}},
		{"custom_message", map[string]any{"customType": "ext", "content": "note", "display": true, "details": map[string]any{"k": "v"}}},
		{"usage", map[string]any{"kind": "cache_warm", "provider": "anthropic", "model": "claude-x", "usage": usage}},
		{"model_change", map[string]any{"provider": "openai", "modelId": "gpt-x"}},
		{"thinking_level_change", map[string]any{"thinkingLevel": "high"}},
		{"active_tools_change", map[string]any{"activeToolNames": []any{"read", "bash"}}},
		{"custom", map[string]any{"customType": "ext", "data": map[string]any{"n": json.Number("1")}}},
	}
	k := pick(mu.r, kinds)
	what := k.typ
	if mu.r.IntN(2) == 0 {
		var keys []string
		for f := range k.fields {
			keys = append(keys, f)
		}
		slices.Sort(keys)
		f := pick(mu.r, keys)
		if mu.r.IntN(4) == 0 {
			delete(k.fields, f)
			what += " without " + f
		} else {
			k.fields[f] = mu.oddValue()
			if k.typ == "model_change" {
				k.fields[f] = pick(mu.r, []any{"", " ", "other"}) // sessiontree's ModelRef holds strings (documented)
			}
			what += fmt.Sprintf(" with %s = %s", f, mu.show(k.fields[f]))
		}
	}
	mu.appendEntry(k.typ, k.fields)
	return what + " appended"
}

func (mu *mutation) systemMessage() string {
	msg := map[string]any{"role": "system", "content": pick(mu.r, []any{"", "be brief", nil, []any{}, []any{map[string]any{"type": "text", "text": "rules"}}, json.Number("3")}),
		"timestamp": json.Number("1798761600000")}
	if mu.r.IntN(2) == 0 {
		msg["sections"] = map[string]any{"rules": "<rules>x</rules>", "2": nil}
	}
	if mu.r.IntN(3) == 0 {
		msg["toolsAdded"] = []any{map[string]any{"name": "read", "description": "d", "parameters": map[string]any{}}}
	}
	if mu.r.IntN(5) == 0 {
		delete(msg, "timestamp")
	}
	mu.appendEntry("message", map[string]any{"message": msg})
	return fmt.Sprintf("system message %s", mu.show(msg["content"]))
}

// someMessage picks an entry with a message object: its line, the
// entry and the message; -1 when there is none.
func (mu *mutation) someMessage() (int, map[string]any, map[string]any) {
	var cands []entryLine
	for _, e := range mu.objects() {
		if _, ok := e.o["message"].(map[string]any); ok {
			cands = append(cands, e)
		}
	}
	if len(cands) == 0 {
		return -1, nil, nil
	}
	e := pick(mu.r, cands)
	return e.i, e.o, e.o["message"].(map[string]any)
}

func (mu *mutation) content() string {
	i, obj, msg := mu.someMessage()
	if i < 0 {
		return ""
	}
	c := pick(mu.r, []any{[]any{}, "", []any{map[string]any{}}, []any{map[string]any{"type": "text"}},
		[]any{map[string]any{"type": "text", "text": json.Number("5")}}, []any{map[string]any{"type": "image"}}, nil,
		[]any{nil}, map[string]any{"text": "x"}, []any{map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text", "text": "b"}},
		json.Number("1"), " ", []any{"bare string"}})
	msg["content"] = c
	mu.set(i, obj)
	if strings.Contains(mu.show(c), `"text":5`) {
		mu.textNotString = true
	}
	return fmt.Sprintf("line %d: message.content = %s", i+1, mu.show(c))
}

func (mu *mutation) hugeNumber() string {
	i, obj := mu.someEntry()
	if i < 0 {
		return ""
	}
	big := pick(mu.r, []string{"1e400", "-1e400", "123456789012345678901234567890", "1e-400", "9007199254740993", "-0", "1.0", "0.1e1"})
	v := mu.rawJSON(big)
	mu.hugeUsage = true
	switch {
	case obj["usage"] != nil:
		if u, ok := obj["usage"].(map[string]any); ok {
			u[pick(mu.r, []string{"input", "output", "cacheRead", "cacheWrite", "totalTokens"})] = v
		}
	case obj["message"] != nil:
		msg, _ := obj["message"].(map[string]any)
		if u, ok := msg["usage"].(map[string]any); ok {
			if c, ok := u["cost"].(map[string]any); ok && mu.r.IntN(2) == 0 {
				c["total"] = v
			} else {
				u["input"] = v
			}
		} else if msg != nil {
			msg["timestamp"] = v
		}
	case obj["type"] == "compaction":
		obj["tokensBefore"] = v
	default:
		obj[pick(mu.r, []string{"tokensBefore", "n"})] = v
	}
	mu.set(i, obj)
	return fmt.Sprintf("line %d: a number %s", i+1, big)
}

func (mu *mutation) unicode() string {
	i, obj, msg := mu.someMessage()
	if i < 0 {
		return ""
	}
	texts := []string{`"\ud800 lone"`, `"a\udc00b"`, `"\ud83d\ude00 pair"`, `"nul \u0000 in"`, `"\u2028\u2029"`, `"e\u0301"`, `"\u202egnp.exe"`, `"\ufeff bom"`, `"tab\there"`, `"\u0085nel"`}
	raw := pick(mu.r, texts)
	if mu.r.IntN(4) == 0 {
		msg["content"] = mu.rawJSON(raw)
	} else {
		msg["content"] = []any{map[string]any{"type": "text", "text": mu.rawJSON(raw)}}
	}
	mu.set(i, obj)
	if mu.r.IntN(4) == 0 {
		// bytes that are not UTF-8 inside the text
		mu.lines[i] = strings.Replace(mu.lines[i], `"@@`, "\"\xff\xfe@@", 1)
		return fmt.Sprintf("line %d: content %s, invalid UTF-8", i+1, raw)
	}
	return fmt.Sprintf("line %d: content %s", i+1, raw)
}

// dupKey writes a key a second time at the end of an entry's object:
// JSON.parse keeps the last.
func (mu *mutation) dupKey() string {
	i, obj := mu.someEntry()
	if i < 0 {
		return ""
	}
	l := strings.TrimRight(mu.lines[i], "\r")
	if !strings.HasSuffix(l, "}") {
		return ""
	}
	var extra string
	switch mu.r.IntN(6) {
	case 0:
		extra = `"type":"label"`
	case 1:
		extra = `"id":"` + mu.newID() + `"`
	case 2:
		extra = `"parentId":null`
	case 3:
		extra = `"timestamp":"2026-12-31T00:00:00.000Z"`
	case 4:
		extra = `"message":{"role":"user","content":"second"}`
	default:
		if obj["type"] == "compaction" {
			extra = `"summary":"second summary"`
		} else {
			extra = `"label":"second"`
		}
	}
	mu.lines[i] = l[:len(l)-1] + "," + extra + "}" + mu.lines[i][len(l):]
	return fmt.Sprintf("line %d: key written twice: %s", i+1, extra)
}

func (mu *mutation) header() string {
	h := mu.object(mu.headerI)
	if h == nil {
		return ""
	}
	var what string
	switch mu.r.IntN(7) {
	case 0:
		v := pick(mu.r, []any{json.Number("2"), json.Number("3.0"), "3", nil, json.Number("1"), mu.rawJSON("3e0")})
		h["version"] = v
		what = "version = " + mu.show(v)
	case 1:
		v := mu.oddValue()
		h["cwd"] = v
		what = "cwd = " + mu.show(v)
	case 2:
		delete(h, "cwd")
		what = "no cwd"
	case 3:
		v := pick(mu.r, []any{nil, json.Number("5"), "", "/elsewhere/parent.jsonl"})
		h["parentSession"] = v
		what = "parentSession = " + mu.show(v)
	case 4:
		h["extra"] = mu.oddValue()
		what = "unknown header field"
	default:
		v := mu.oddTime()
		h["timestamp"] = v
		what = "timestamp = " + mu.show(v)
	}
	mu.set(mu.headerI, h)
	return "header: " + what
}

// retarget points a reference (parentId, firstKeptEntryId, targetId,
// fromId) somewhere else.
func (mu *mutation) retarget() string {
	i, obj := mu.someEntry()
	var keys []string
	for _, k := range []string{"parentId", "firstKeptEntryId", "targetId", "fromId"} {
		if _, ok := obj[k]; ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	k := pick(mu.r, keys)
	v := mu.refID()
	if mu.r.IntN(8) == 0 {
		v = obj["id"]
	}
	obj[k] = v
	mu.set(i, obj)
	return fmt.Sprintf("line %d: %s = %s", i+1, k, mu.show(v))
}
