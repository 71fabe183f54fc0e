package storetest

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/sessiontree/sessiontree"
)

// drawer draws the arguments of one step from the step's own random
// source, so that a step does the same whatever steps a shrink dropped
// before it (up to the ids it finds).
type drawer struct {
	rng *rand.Rand
	m   *model
	n   int // counts the ids drawn
	// nul: the backend takes a NUL in an entry's id or provider.
	nul bool
}

func (d *drawer) intn(n int) int { return d.rng.IntN(n) }

func (d *drawer) oneIn(n int) bool { return d.rng.IntN(n) == 0 }

// ref picks an entry id: mostly one of the log (its leaf entries too),
// sometimes "" (before the first entry) or one that no entry has.
func (d *drawer) ref() string {
	switch r := d.intn(12); {
	case r == 0:
		return ""
	case r == 1 || len(d.m.log) == 0:
		return "0missing"
	case r < 5:
		return d.m.log[len(d.m.log)-1-d.intn(min(3, len(d.m.log)))].ID // recent
	}
	return d.m.log[d.intn(len(d.m.log))].ID
}

// existing picks an entry id of the log, "0missing" when it is empty.
func (d *drawer) existing() string {
	if len(d.m.log) == 0 {
		return "0missing"
	}
	return d.m.log[d.intn(len(d.m.log))].ID
}

// quoted is s as a JSON string, or null for "".
func quoted(s string) string {
	if s == "" {
		return "null"
	}
	return string(mustJSON(s))
}

// usageJSON is an assistant message's usage object.
func (d *drawer) usageJSON() string {
	return fmt.Sprintf(`{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":%d,"totalTokens":0,"cost":{"total":%g}}`,
		d.intn(500), d.intn(90), d.intn(40), d.intn(7), float64(d.intn(100))/1000)
}

// message draws the message of a message entry, of a role pi 1.x writes.
func (d *drawer) message(tag string) string {
	switch d.intn(8) {
	case 0, 1:
		return `{"role":"user","content":"ask ` + tag + `","timestamp":1765000000000}`
	case 2:
		return `{"role":"user","content":[{"type":"text","text":"blocks ` + tag + `"},{"type":"image","data":"AA==","mimeType":"image/png"}],"timestamp":1}`
	case 3, 4:
		provider, model := []string{"anthropic", "openai", "", `nul\u0000`}[d.intn(3+d.nulOdds())], "m"+strconv.Itoa(d.intn(3))
		return `{"role":"assistant","content":[{"type":"text","text":"answer ` + tag + `"},{"type":"toolCall","id":"c` + tag +
			`","name":"bash","arguments":{"command":"ls"}}],"provider":"` + provider + `","model":"` + model +
			`","usage":` + d.usageJSON() + `,"stopReason":"toolUse","timestamp":2}`
	case 5:
		return `{"role":"toolResult","toolCallId":"c` + tag + `","toolName":"bash","content":[{"type":"text","text":"out ` + tag +
			`"}],"isError":false,"timestamp":3}`
	case 6:
		return `{"role":"bashExecution","command":"make","output":"ok ` + tag + `","exitCode":0,"cancelled":false,"truncated":false,"timestamp":4}`
	}
	return `{"role":"system","content":"system ` + tag + `","timestamp":5}`
}

// fields draws the type and fields of an entry of any type pi 1.x
// writes, or of a type it does not know; valid, except where bad.
func (d *drawer) fields(tag string) (sessiontree.EntryType, string) {
	switch d.intn(20) {
	case 0:
		return sessiontree.TypeThinkingLevelChange, `{"thinkingLevel":"` + []string{"off", "low", "high"}[d.intn(3)] + `"}`
	case 1:
		return sessiontree.TypeModelChange, `{"provider":"p` + strconv.Itoa(d.intn(2)) + `","modelId":"m` + tag + `"}`
	case 2:
		return sessiontree.TypeActiveToolsChange, `{"activeToolNames":["read","bash` + tag + `"]}`
	case 3:
		keep := []string{`"` + d.ref() + `"`, `"` + d.existing() + `"`, `null`}[d.intn(3)]
		tail := ""
		if d.oneIn(4) {
			tail = `,"retainedTail":[{"role":"user","content":"kept ` + tag + `","timestamp":1}]`
		}
		return sessiontree.TypeCompaction, `{"summary":"sum ` + tag + `","firstKeptEntryId":` + keep + `,"tokensBefore":42` + tail + `}`
	case 4:
		return sessiontree.TypeBranchSummary, `{"fromId":"` + d.existing() + `","summary":"left ` + tag + `","usage":` + d.usageJSON() + `}`
	case 5:
		return sessiontree.TypeCustom, `{"customType":"ext","data":{"n":` + strconv.Itoa(d.intn(9)) + `}}`
	case 6:
		return sessiontree.TypeCustomMessage, `{"customType":"ext","content":"note ` + tag + `","display":true}`
	case 7:
		return sessiontree.TypeSessionInfo, `{"name":` + quoted(d.text("name "+tag)) + `}`
	case 8:
		return sessiontree.TypeLabel, `{"targetId":"` + d.ref() + `","label":` + quoted(d.text("mark "+tag)) + `}`
	case 9:
		repl := []string{`null`, `{"content":"edited ` + tag + `"}`}[d.intn(2)]
		return sessiontree.TypeContextEdit, `{"targetId":"` + d.existing() + `","replacement":` + repl + `}`
	case 10:
		return sessiontree.TypeUsage, `{"kind":"cache_warm","provider":"anthropic","model":"m1","usage":` + d.usageJSON() + `}`
	case 11:
		return "widget", `{"state":{"tag":"` + tag + `"}}`
	case 12:
		return d.bad(tag)
	}
	return sessiontree.TypeMessage, `{"message":` + d.message(tag) + `}`
}

// text draws a name or label: plain, empty, or with what the texts
// derived from entries must carry alike on every backend (line breaks,
// surrounding space, a NUL, non-ASCII).
func (d *drawer) text(plain string) string {
	return []string{plain, plain, "", " two\nlines ", "nul\x00in " + plain, "é🙂 " + plain}[d.intn(6)]
}

// bad draws a draft every backend refuses.
func (d *drawer) bad(tag string) (sessiontree.EntryType, string) {
	switch d.intn(5) {
	case 0:
		return sessiontree.TypeLeaf, `{"targetId":null}`
	case 3:
		return "", `{"untyped":"` + tag + `"}`
	case 1:
		return "session", `{"cwd":"/"}`
	case 2:
		return sessiontree.TypeMessage, `{"note":"no message ` + tag + `"}`
	}
	return sessiontree.TypeCustom, `{"id":"x` + tag + `","customType":"ext"}`
}

// draft draws a draft: its id given (fresh, or one taken) or left to the
// backend, its timestamp given or left to it.
func (d *drawer) draft(ts string) sessiontree.Draft {
	d.n++
	tag := strconv.Itoa(d.n)
	t, f := d.fields(tag)
	dr := sessiontree.Draft{Type: t, Fields: []byte(f)}
	switch r := d.intn(6); {
	case r == 0 && len(d.m.log) > 0:
		dr.ID = d.existing()
	case r < 3:
		dr.ID = fmt.Sprintf("%08x", d.rng.Uint32())
		if d.nul && d.oneIn(8) {
			dr.ID = "nul\x00" + dr.ID
		}
	}
	if !d.oneIn(4) {
		dr.Timestamp = ts
		if d.oneIn(8) {
			dr.Timestamp = oddTimes[d.intn(len(oddTimes))]
		}
	}
	return dr
}

// guard draws the guard of a write: none mostly, else on the leaf or on
// an entry that is not it.
func (d *drawer) guard() sessiontree.AppendOptions {
	switch d.intn(5) {
	case 0:
		return sessiontree.IfLeaf(d.m.r.Leaf)
	case 1:
		if stale := d.ref(); stale != d.m.r.Leaf {
			return sessiontree.IfLeaf(stale)
		}
	}
	return sessiontree.AppendOptions{}
}

// oddTimes are timestamps pi does not write but a file may hold: another
// zone, another day, no milliseconds, no zone, none at all.
var oddTimes = []string{
	"2026-12-08T01:30:00+02:00", "2026-12-06T23:59:59.999Z", "2026-12-31T23:00:00-03:00",
	"2026-12-07T10:00:00Z", "2026-12-07T10:00:00", "when",
}

// nulOdds is 1 when the backend takes a NUL in an entry's own text, to
// draw one among others, 0 when it does not.
func (d *drawer) nulOdds() int {
	if d.nul {
		return 1
	}
	return 0
}
