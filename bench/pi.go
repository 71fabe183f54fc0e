package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/sessiontree/sessiontree/internal/pipkg"
)

// The released pi coding agent, timed on the same files: its own loader,
// SessionManager.open (read and parse the whole file, build the index) and
// buildSessionContext, called from a small node script written at run
// time. One node process per pi release serves the whole run over a pipe,
// so its JIT is as warm as an agent's would be after the first resume, and
// its runs interleave with the other backends' like everything else.
//
// The script imports the package's dist/core/session-manager.js (package
// pipkg installs it and says why that file): SessionManager is the same
// class as the index's, and 0.x releases load the same file, so every
// release runs alike.

const (
	// piDefaultVersion is the pi release -vs-pi times unless -pi-versions
	// says otherwise: the current one.
	piDefaultVersion = "1.6.0"
	// piLegacyVersion is the last release published as
	// @mariozechner/pi-coding-agent, the one sessiontree was first built
	// against; -pi-versions 1.6.0,0.73.1 times it beside the current one.
	piLegacyVersion = "0.73.1"
)

// piVersionRE is what -pi-versions accepts: an exact release, since the
// install is cached per version and checked against package.json.
var piVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// piBackend is the backend name pi release version's rows carry in the
// table, the JSON, the charts and the benchstat lines: "pi-1.6.0".
func piBackend(version string) string { return backendPi + "-" + version }

// isPiBackend reports whether b is one of pi's rows.
func isPiBackend(b string) bool { return strings.HasPrefix(b, backendPi+"-") }

// piScript reads one JSON request per line and answers one JSON line:
// {op:"open"|"resume", file, n} → {ns, messages, leaf}: the time of n
// loads measured with hrtime inside node; {op:"list"|"search", file: the
// sessions folder, cwd, query, n} → {ns, messages: sessions found};
// {op:"memory", kind: one of those ops, ...} → {heap, rss}: heap and RSS
// growth over one operation (after a full collection), its result still
// referenced. Its arguments are the package's session-manager.js and
// package.json; its first line says node's version and the package's.
const piScript = `import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
let SessionManager, version;
try {
  ({ SessionManager } = await import(pathToFileURL(process.argv[2]).href));
  ({ version } = JSON.parse(readFileSync(process.argv[3], "utf8")));
} catch (e) {
  out({ error: String((e && e.stack) || e) });
  process.exit(1);
}
out({ ready: true, node: process.version, version });

async function load(req) {
  switch (req.op === "memory" ? req.kind : req.op) {
    case "list": {
      const list = await SessionManager.list(req.cwd, req.file);
      return { sm: list, messages: list.length, leaf: null };
    }
    case "search": {
      const list = await SessionManager.list(req.cwd, req.file);
      const q = req.query.toLowerCase();
      const hits = list.filter((s) => s.allMessagesText.toLowerCase().includes(q));
      return { sm: hits, messages: hits.length, leaf: null };
    }
    case "resume": {
      const sm = SessionManager.open(req.file);
      const c = sm.buildSessionContext();
      return { sm, messages: c.messages.length, leaf: sm.getLeafId() };
    }
  }
  const sm = SessionManager.open(req.file);
  return { sm, messages: 0, leaf: sm.getLeafId() };
}

for await (const line of createInterface({ input: process.stdin })) {
  let req;
  try {
    req = JSON.parse(line);
    if (req.op === "memory") {
      globalThis.gc();
      const m0 = process.memoryUsage();
      const r = await load(req);
      const m1 = process.memoryUsage();
      out({ heap: m1.heapUsed - m0.heapUsed, rss: m1.rss - m0.rss, leaf: r.leaf });
      continue;
    }
    let r;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < req.n; i++) r = await load(req);
    const ns = Number(process.hrtime.bigint() - t0);
    out({ ns, messages: r.messages, leaf: r.leaf });
  } catch (e) {
    out({ error: String((e && e.stack) || e) });
  }
}
`

// piRunner is the node process running one pi release's loader.
type piRunner struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	mu     sync.Mutex // one request at a time
	// version and pkg are the release and its npm package; backend is its
	// rows' name (piBackend); node is node's version.
	version, pkg, backend, node string
}

// piRequest is a line the script reads.
type piRequest struct {
	Op    string `json:"op"`
	Kind  string `json:"kind,omitempty"`
	File  string `json:"file"`
	Cwd   string `json:"cwd,omitempty"`
	Query string `json:"query,omitempty"`
	N     int    `json:"n,omitempty"`
}

// piReply is a line the script writes.
type piReply struct {
	Ready    bool    `json:"ready"`
	Node     string  `json:"node"`
	Version  string  `json:"version"`
	NS       float64 `json:"ns"`
	Messages int     `json:"messages"`
	Leaf     string  `json:"leaf"`
	Heap     int64   `json:"heap"`
	RSS      int64   `json:"rss"`
	Error    string  `json:"error"`
}

var (
	// errNoNode means node or npm is not installed; -vs-pi is skipped.
	errNoNode = pipkg.ErrNoNode
	// errPiNotInstalled means the release is not in the cache and the
	// caller asked not to install it (the tests, which must not need the
	// network).
	errPiNotInstalled = pipkg.ErrNotInstalled
)

// startPi installs pi release version into the cache (once; not at all
// unless install is set) and starts the node script on it.
func startPi(ctx context.Context, cache, version string, install bool, progress func(string, ...any)) (*piRunner, error) {
	node, pkgDir, err := pipkg.Ensure(ctx, cache, version, install, progress)
	if err != nil {
		return nil, err
	}
	pkg := pipkg.Package(version)
	dir, _ := pipkg.Paths(cache, version)
	script := filepath.Join(dir, "sessiontree-bench-loader.mjs")
	if err := os.WriteFile(script, []byte(piScript), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(node, "--expose-gc", script,
		pipkg.SessionManagerJS(pkgDir),
		filepath.Join(pkgDir, "package.json"))
	stdin, stdout, err := startPiped(cmd, "node")
	if err != nil {
		return nil, err
	}
	p := &piRunner{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 1<<16),
		version: version, pkg: pkg, backend: piBackend(version)}
	rep, err := p.read()
	if err == nil && (!rep.Ready || rep.Version != version) {
		err = fmt.Errorf("loaded version %q, want %s", rep.Version, version)
	}
	if err != nil {
		p.close()
		return nil, fmt.Errorf("start %s@%s: %w", pkg, version, err)
	}
	p.node = rep.Node
	return p, nil
}

func (p *piRunner) read() (piReply, error) {
	line, err := p.stdout.ReadBytes('\n')
	if err != nil {
		return piReply{}, fmt.Errorf("pi %s loader: %w", p.version, err)
	}
	var rep piReply
	if err := json.Unmarshal(line, &rep); err != nil {
		return piReply{}, fmt.Errorf("pi %s loader said %q: %w", p.version, strings.TrimSpace(string(line)), err)
	}
	if rep.Error != "" {
		return rep, fmt.Errorf("pi %s loader: %s", p.version, rep.Error)
	}
	return rep, nil
}

func (p *piRunner) call(req piRequest) (piReply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, _ := json.Marshal(req)
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return piReply{}, fmt.Errorf("pi %s loader: %w", p.version, err)
	}
	return p.read()
}

func (p *piRunner) close() error {
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		return <-done
	}
}

// piCases are each pi release's loader on the dataset's file: op "open"
// or "resume"; none without -vs-pi.
func piCases(r *runner, ds *dataset, op string) []benchCase {
	var cs []benchCase
	for _, pi := range r.pis {
		cs = append(cs, piCase(pi, ds, op))
	}
	return cs
}

func piCase(pi *piRunner, ds *dataset, op string) benchCase {
	return benchCase{backend: pi.backend, setup: func(ctx context.Context) (*prepared, error) {
		rows := len(ds.ActivePath)
		if op == "open" {
			rows = 1
		}
		p := &prepared{rows: rows, external: true}
		check := func(rep piReply) error {
			if rep.Leaf != ds.Leaf {
				return fmt.Errorf("pi %s's leaf is %s, want %s", pi.version, rep.Leaf, ds.Leaf)
			}
			if op == "resume" && rep.Messages != ds.ContextMessages {
				return fmt.Errorf("pi %s's context has %d messages, ours %d", pi.version, rep.Messages, ds.ContextMessages)
			}
			return nil
		}
		p.timed = func(ctx context.Context, n int) (time.Duration, error) {
			rep, err := pi.call(piRequest{Op: op, File: ds.File, N: n})
			if err != nil {
				return 0, err
			}
			return time.Duration(rep.NS), check(rep)
		}
		p.op = func(ctx context.Context) error { _, err := p.timed(ctx, 1); return err }
		p.memory = func(ctx context.Context) (memPeak, error) {
			rep, err := pi.call(piRequest{Op: "memory", Kind: op, File: ds.File})
			if err != nil {
				return memPeak{}, err
			}
			return memPeak{Heap: rep.Heap, RSS: -1}, nil // node keeps its heap between runs: RSS growth is not attributable
		}
		return p, nil
	}}
}
