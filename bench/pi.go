package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The released pi coding agent, timed on the same files: its own loader,
// SessionManager.open (read and parse the whole file, build the index) and
// buildSessionContext, called from a small node script written at run
// time. One node process serves the whole run over a pipe, so its JIT is
// as warm as an agent's would be after the first resume, and its runs
// interleave with the other backends' like everything else.

const (
	piPackage = "@mariozechner/pi-coding-agent"
	piVersion = "0.73.1"
)

// piScript reads one JSON request per line and answers one JSON line:
// {op:"open"|"resume", file, n} → {ns, messages, leaf}: the time of n
// loads measured with hrtime inside node; {op:"list"|"search", file: the
// sessions folder, cwd, query, n} → {ns, messages: sessions found};
// {op:"memory", kind: one of those ops, ...} → {heap, rss}: heap and RSS
// growth over one operation (after a full collection), its result still
// referenced.
const piScript = `import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

let mod;
try {
  mod = await import(pathToFileURL(process.argv[2]).href);
} catch (e) {
  mod = await import(pathToFileURL(process.argv[3]).href);
}
const { SessionManager } = mod;
const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
out({ ready: true, node: process.version });

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

// piRunner is the node process running pi's loader.
type piRunner struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	mu     sync.Mutex // one request at a time
	node   string
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
	NS       float64 `json:"ns"`
	Messages int     `json:"messages"`
	Leaf     string  `json:"leaf"`
	Heap     int64   `json:"heap"`
	RSS      int64   `json:"rss"`
	Error    string  `json:"error"`
}

// errNoNode means node or npm is not installed; -vs-pi is skipped.
var errNoNode = errors.New("node and npm are needed for -vs-pi")

// startPi installs pi into the cache (once) and starts the node script.
func startPi(ctx context.Context, cache string, progress func(string, ...any)) (*piRunner, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errNoNode
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nil, errNoNode
	}
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		cache = filepath.Join(base, "sessiontree-bench")
	}
	dir := filepath.Join(cache, "pi-coding-agent-"+piVersion)
	pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(piPackage))
	if !piInstalled(pkgDir) {
		progress("installing %s@%s into %s (npm)", piPackage, piVersion, dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true,"type":"module"}`+"\n"), 0o644); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund",
			"--ignore-scripts", "--loglevel=error", piPackage+"@"+piVersion)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("npm install %s@%s: %w\n%s", piPackage, piVersion, err, out)
		}
		if !piInstalled(pkgDir) {
			return nil, fmt.Errorf("npm install %s@%s: package not found afterwards in %s", piPackage, piVersion, pkgDir)
		}
	}
	script := filepath.Join(dir, "sessiontree-bench-loader.mjs")
	if err := os.WriteFile(script, []byte(piScript), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(node, "--expose-gc", script,
		filepath.Join(pkgDir, "dist", "index.js"),
		filepath.Join(pkgDir, "dist", "core", "session-manager.js"))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	p := &piRunner{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 1<<16)}
	rep, err := p.read()
	if err != nil || !rep.Ready {
		p.close()
		return nil, fmt.Errorf("pi loader did not start: %v", err)
	}
	p.node = rep.Node
	return p, nil
}

func piInstalled(pkgDir string) bool {
	b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return false
	}
	var pkg struct{ Version string }
	return json.Unmarshal(b, &pkg) == nil && pkg.Version == piVersion
}

func (p *piRunner) read() (piReply, error) {
	line, err := p.stdout.ReadBytes('\n')
	if err != nil {
		return piReply{}, fmt.Errorf("pi loader: %w", err)
	}
	var rep piReply
	if err := json.Unmarshal(line, &rep); err != nil {
		return piReply{}, fmt.Errorf("pi loader said %q: %w", strings.TrimSpace(string(line)), err)
	}
	if rep.Error != "" {
		return rep, fmt.Errorf("pi loader: %s", rep.Error)
	}
	return rep, nil
}

func (p *piRunner) call(req piRequest) (piReply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, _ := json.Marshal(req)
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return piReply{}, fmt.Errorf("pi loader: %w", err)
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

// piCase is pi's loader on the dataset's file: op "open" or "resume".
func piCase(r *runner, ds *dataset, op string) benchCase {
	return benchCase{backend: backendPi, setup: func(ctx context.Context) (*prepared, error) {
		if r.pi == nil {
			return nil, errUnsupported
		}
		rows := len(ds.ActivePath)
		if op == "open" {
			rows = 1
		}
		p := &prepared{rows: rows, external: true}
		check := func(rep piReply) error {
			if rep.Leaf != ds.Leaf {
				return fmt.Errorf("pi's leaf is %s, want %s", rep.Leaf, ds.Leaf)
			}
			if op == "resume" && rep.Messages != ds.ContextMessages {
				return fmt.Errorf("pi's context has %d messages, ours %d", rep.Messages, ds.ContextMessages)
			}
			return nil
		}
		p.timed = func(ctx context.Context, n int) (time.Duration, error) {
			rep, err := r.pi.call(piRequest{Op: op, File: ds.File, N: n})
			if err != nil {
				return 0, err
			}
			return time.Duration(rep.NS), check(rep)
		}
		p.op = func(ctx context.Context) error { _, err := p.timed(ctx, 1); return err }
		p.memory = func(ctx context.Context) (memPeak, error) {
			rep, err := r.pi.call(piRequest{Op: "memory", Kind: op, File: ds.File})
			if err != nil {
				return memPeak{}, err
			}
			return memPeak{Heap: rep.Heap, RSS: -1}, nil // node keeps its heap between runs: RSS growth is not attributable
		}
		return p, nil
	}}
}
