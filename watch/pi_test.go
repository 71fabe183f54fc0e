package watch_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/internal/pipkg"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
	"github.com/sessiontree/sessiontree/watch"
)

// piVersion is the pi release the tests drive.
const piVersion = "1.6.0"

// piWriterScript drives a pi SessionManager that writes a session into a
// folder, one JSON request per line on stdin, one JSON answer per line:
//
//	{op:"start", dir, cwd, seed}  a new session (no file until its first
//	                               user message, as pi does)
//	{op:"step", n}                n appends picked at random (seeded), of
//	                               every kind pi writes, sometimes moving
//	                               the leaf first; then pi's answers
//	{op:"fork"}                   createBranchedSession at the leaf (a new
//	                               file); then pi's answers
//	{op:"crash"}                  half a line written to the file, as by a
//	                               pi killed in the middle of a write; {ok}
//	{op:"reopen"}                 SessionManager.open on the file (which
//	                               ends a torn last line with a newline),
//	                               one user message; then pi's answers
//	{op:"open", file}             SessionManager.open on another file
//	                               (which migrates an old one, rewriting
//	                               it whole), one user message; then pi's
//	                               answers
//	{op:"user", text}             one user message; {ok}
//
// pi's answers are those of SessionManager.open on the file, as the
// fixtures' (testdata/pi1/README.md): sessionId, cwd, entryCount, leafId,
// name, context, branch, labels, projection, contextEntryIds.
const piWriterScript = `import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const { SessionManager } = await import(pathToFileURL(process.argv[2]).href);
const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");

let sm, rand, n = 0;
const seeded = (a) => () => {
  a = (a + 0x6d2b79f5) | 0;
  let t = Math.imul(a ^ (a >>> 15), 1 | a);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const usage = () => ({ input: 100 + n, output: 20, cacheRead: 50, cacheWrite: 5, totalTokens: 175 + n,
  cost: { input: 0.001, output: 0.002, cacheRead: 0.0001, cacheWrite: 0.0002, total: 0.0033 } });
const text = (role) => role + " words number" + (++n) + " zebra" + n;
const user = (t) => sm.appendMessage({ role: "user", content: t, timestamp: Date.now() });
const assistant = () => sm.appendMessage({ role: "assistant", content: [{ type: "text", text: text("assistant") }],
  api: "anthropic-messages", provider: "anthropic", model: pick(["claude-a", "claude-b"]), usage: usage(),
  stopReason: "stop", timestamp: Date.now() });
const editable = () => sm.getBranch().filter((e) => e.type === "custom_message" ||
  (e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role)));

const ops = [
  () => user(text("user")),
  assistant,
  () => sm.appendMessage({ role: "toolResult", toolCallId: "call" + n, toolName: "read",
    content: [{ type: "text", text: text("tool") }], isError: false, timestamp: Date.now() }),
  () => sm.appendModelChange("openai", pick(["gpt-a", "gpt-b"])),
  () => sm.appendThinkingLevelChange(pick(["low", "medium", "high"])),
  () => sm.appendLabelChange(pick(sm.getEntries()).id, pick(["checkpoint", "", " spaced "])),
  () => sm.appendSessionInfo(pick(["live session", "renamed\nsession", ""])),
  () => sm.appendCustomEntry("ext-state", { n }),
  () => sm.appendCustomMessageEntry("ext-note", text("custom"), true, { n }),
  () => sm.appendUsage("cache_warm", "anthropic", "claude-a", usage()),
  () => sm.appendContextEdit(pick(editable()).id, pick([null, { content: "edited " + n }])),
  () => { sm.branch(pick(sm.getEntries()).id); user(text("branched")); },
  () => sm.branchWithSummary(pick(sm.getEntries()).id, "summary of the branch left " + n, undefined, false, usage()),
  () => sm.appendCompaction("compacted " + n, pick(sm.getBranch()).id, 1000 + n, { readFiles: [] }, false, usage()),
  () => sm.appendMessage({ role: "system", content: "", sections: { rules: "rule " + n }, timestamp: Date.now() }),
];

function answers() {
  const file = sm.getSessionFile();
  const p = SessionManager.open(file);
  const entries = p.getEntries();
  const labels = {};
  for (const e of entries) {
    const l = p.getLabel(e.id);
    if (l !== undefined) labels[e.id] = l;
  }
  return {
    file,
    sessionId: p.getSessionId(),
    cwd: p.getCwd(),
    entryCount: entries.length,
    leafId: p.getLeafId(),
    name: p.getSessionName() ?? null,
    context: p.buildSessionContext(),
    branch: p.getBranch().map((e) => e.id),
    labels,
    projection: p.buildSessionProjection().entries.map((e) => ({ sourceId: e.sourceEntry.id, messages: e.messages })),
    contextEntryIds: p.buildContextEntries().map((e) => e.id),
  };
}

for await (const line of createInterface({ input: process.stdin })) {
  try {
    const req = JSON.parse(line);
    switch (req.op) {
      case "start":
        rand = seeded(req.seed);
        sm = SessionManager.create(req.cwd, req.dir);
        sm.appendModelChange("anthropic", "claude-a");
        sm.appendThinkingLevelChange("medium");
        sm.appendMessage({ role: "system", content: "", sections: { preamble: "you are pi" }, timestamp: Date.now() });
        out({ ok: true });
        break;
      case "step":
        for (let i = 0; i < req.n; i++) {
          try { pick(ops)(); } catch (e) { /* pi refused it (a context edit with no target, say) */ }
        }
        if (!sm.getEntries().some((e) => e.type === "message" && e.message.role === "user")) user(text("user"));
        out(answers());
        break;
      case "fork":
        sm.createBranchedSession(sm.getLeafId());
        user(text("forked"));
        out(answers());
        break;
      case "crash":
        appendFileSync(sm.getSessionFile(), '{"type":"message","id":"torn0001","parentId":"');
        out({ ok: true });
        break;
      case "open":
      case "reopen":
        sm = SessionManager.open(req.op === "open" ? req.file : sm.getSessionFile());
        user(text("after the crash"));
        out(answers());
        break;
      case "user":
        user(req.text);
        out({ ok: true });
        break;
      default:
        out({ error: "unknown op " + req.op });
    }
  } catch (e) {
    out({ error: String((e && e.stack) || e) });
  }
}
`

// piWriter is a node process running piWriterScript.
type piWriter struct {
	t     testing.TB
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// piAnswers are pi's answers after a step, with the file they are about.
type piAnswers struct {
	storetest.PiExpected
	File  string `json:"file"`
	Error string `json:"error"`
}

// startPiWriter starts pi 1.6.0 in node, installing it into the cache
// with npm first when it is not there (pipkg.ForTest: without node, npm
// or the registry the test fails under CI=true and is skipped elsewhere).
func startPiWriter(t testing.TB) *piWriter {
	t.Helper()
	node, pkgDir := pipkg.ForTest(t, piVersion)
	script := filepath.Join(t.TempDir(), "pi-writer.mjs")
	if err := os.WriteFile(script, []byte(piWriterScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, pipkg.SessionManagerJS(pkgDir))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node: %v", err)
	}
	p := &piWriter{t: t, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("pi writer: %v", err)
		}
	})
	return p
}

// call sends a request and decodes the answer into v.
func (p *piWriter) call(req map[string]any, v any) {
	p.t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.t.Fatalf("pi writer: %v", err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("pi writer: %v", err)
	}
	var e struct{ Error string }
	if json.Unmarshal(line, &e) == nil && e.Error != "" {
		p.t.Fatalf("pi writer %v: %s", req["op"], e.Error)
	}
	if err := json.Unmarshal(line, v); err != nil {
		p.t.Fatalf("pi writer said %q: %v", line, err)
	}
}

// followPi starts pi writing a new session into a folder that does not
// exist yet, and a watch following the folder above it.
func followPi(t testing.TB) (*piWriter, *store.Store, *running) {
	t.Helper()
	pi := startPiWriter(t)
	dir := filepath.Join(t.TempDir(), "sessions", "--home-user-app--")
	s := openStore(t)
	w := startWatch(t, s, []string{filepath.Dir(dir)}, watch.Options{})
	pi.call(map[string]any{"op": "start", "dir": dir, "cwd": "/home/user/app", "seed": 16}, &struct{}{})
	return pi, s, w
}

// TestWatchFollowsPi runs pi 1.6.0's SessionManager writing a session
// into a folder that does not exist yet while a watch follows it: after
// every few appends (of every kind pi writes, branches, compactions,
// context edits, a crash in the middle of a line and pi opening the file
// again, and a fork into a new file) the database answers what pi
// answers on the file: entries, leaf, name, context, full branch, labels,
// projection.
func TestWatchFollowsPi(t *testing.T) {
	pi, s, w := followPi(t)
	steps := 24
	if testing.Short() {
		steps = 12
	}
	files := map[string]bool{}
	for i := range steps {
		var ans piAnswers
		switch i {
		case steps / 3:
			pi.call(map[string]any{"op": "crash"}, &struct{}{})
			w.waitFor("the torn line", func(e watch.Event) bool { return e.Kind == watch.Unsettled && e.Result.Torn != nil })
			pi.call(map[string]any{"op": "reopen"}, &ans)
		case steps / 2:
			pi.call(map[string]any{"op": "fork"}, &ans)
		default:
			pi.call(map[string]any{"op": "step", "n": 1 + i%4}, &ans)
		}
		files[ans.File] = true
		w.caughtUp(ans.SessionID, ans.EntryCount)
		st, err := s.OpenSession(context.Background(), ans.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		storetest.CheckPi(t, st, ans.PiExpected)
		st.Close()
		if t.Failed() {
			t.Fatalf("step %d: the database differs from pi on %s", i, ans.File)
		}
	}
	if len(files) != 2 {
		t.Errorf("pi wrote %d files; want 2 (the fork makes one)", len(files))
	}
	if n := w.count(watch.Problem); n != 0 {
		t.Errorf("%d problems reported; want 0", n)
	}
}

// TestWatchFollowsPiMigration: pi opens a version-2 file the watch has
// imported, migrates it (rewriting it whole, with the same entry ids) and
// appends to it: the watch follows the rewrite, and the database answers
// what pi answers.
func TestWatchFollowsPiMigration(t *testing.T) {
	pi := startPiWriter(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "legacy.jsonl")
	old, err := os.ReadFile("../testdata/pi/legacy-v2-hookmessage.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t)
	w := startWatch(t, s, []string{dir}, watch.Options{})
	w.caughtUp("v2-hook", 5)
	var ans piAnswers
	pi.call(map[string]any{"op": "open", "file": path}, &ans)
	if now, err := os.ReadFile(path); err != nil || !strings.Contains(string(now), `"version":3`) {
		t.Fatalf("pi did not migrate the file (%v): %.200s", err, now)
	}
	w.caughtUp(ans.SessionID, ans.EntryCount)
	st, err := s.OpenSession(context.Background(), ans.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.CheckPi(t, st, ans.PiExpected)
	if !rewrittenSeen(w, path) {
		t.Errorf("no Imported event says %s was rewritten", path)
	}
}

// BenchmarkWatchDelay measures the time from pi's write of a user
// message to the message being found by a search of the store, over b.N
// appends one after another (go test -run '^$' -bench WatchDelay
// -benchtime 300x ./watch), and reports the median and the worst in
// milliseconds. The time starts when pi's append has returned (the script
// answers right after it), so the pipe back to Go is counted, not hidden.
func BenchmarkWatchDelay(b *testing.B) {
	pi, s, w := followPi(b)
	var delays []time.Duration
	for i := range b.N {
		word := fmt.Sprintf("delayprobe%dx", i)
		pi.call(map[string]any{"op": "user", "text": "a message to find: " + word}, &struct{}{})
		written := time.Now()
		w.waitFor("the message "+word+" to be searchable", func(e watch.Event) bool {
			if e.Kind != watch.CaughtUp {
				return false
			}
			res, err := s.Search(context.Background(), word, store.SearchOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return len(res.Hits) == 1
		})
		delays = append(delays, time.Since(written))
	}
	slices.Sort(delays)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(delays[len(delays)/2]), "median-ms")
	b.ReportMetric(ms(delays[len(delays)-1]), "worst-ms")
	b.ReportMetric(0, "ns/op")
}
