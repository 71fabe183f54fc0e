//go:build linux

// Command soak runs sessiontree for a long time at a modest, steady rate and
// samples what could grow while the data held stays the same: a sessiontree
// serve process (its RSS, threads, open files, goroutines and Go heap), the
// driver's own in-process store.Store (goroutines, heap, open files), the
// SQLite file with its -wal and -shm, PostgreSQL's connections and
// idle-in-transaction ones, and the temporary files the processes leave.
//
// Beside serve, which HTTP clients call (creates, appends with and without
// ifLeaf, conflicts, bad input and unknown ids on purpose, contexts, pages of
// entries, searches, graphs, forks, deletes, and event streams dropped cleanly,
// half-closed or reset), the driver does the same through the Go API on the
// same database (Follow started and cancelled included), starts sessiontree
// tail processes and kills them (SIGINT or SIGKILL), and pushes to and pulls
// from a second database every minute or so. Sessions beyond -max-sessions,
// and sessions grown past -max-entries, are deleted, so the data held is
// steady and anything that grows is growth over time.
//
// serve's goroutine count and heap come from net/http/pprof, which the
// released binary does not have: build the soak's binary with the overlay in
// testdata, which serves it on $SOAK_PPROF (write the overlay's JSON with the
// absolute paths of your checkout):
//
//	echo '{"Replace":{"'$PWD'/cmd/sessiontree/zz_soak_pprof.go":"'$PWD'/bench/soak/testdata/pprof_overlay.go"}}' > /tmp/overlay.json
//	go build -overlay /tmp/overlay.json -o /tmp/sessiontree-pprof ./cmd/sessiontree
//	go run ./bench/soak -bin /tmp/sessiontree-pprof -db /tmp/soak.db -peer postgres://... -pg postgres://... -dur 10m -out sqlite.csv -prof prof
//
// Every 10 s it appends a row to -out (CSV); -prof receives goroutine and
// heap profiles of both processes at the start, every 5 minutes and at the
// end. README.md holds the figures of the first runs.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// options are the soak's flags.
type options struct {
	bin      string        // the sessiontree binary (with the pprof overlay)
	db       string        // the database of serve and of the driver's store
	peer     string        // the other database, for push and pull
	pgURL    string        // a PostgreSQL database to count connections of ("" for none)
	dur      time.Duration // how long
	out      string        // the CSV of samples
	profDir  string        // where profiles go ("" for none)
	tmpDir   string        // $TMPDIR of the processes started, whose files are counted
	maxSess  int           // sessions kept
	maxEntry int           // entries a session may hold before it is deleted
}

// validate reports every problem of o at once.
func (o options) validate() error {
	var errs []error
	if o.bin == "" {
		errs = append(errs, errors.New("-bin: want the sessiontree binary built with the overlay"))
	}
	if o.db == "" || o.peer == "" {
		errs = append(errs, errors.New("-db and -peer: want two databases"))
	}
	if o.out == "" || o.tmpDir == "" {
		errs = append(errs, errors.New("-out and -tmp: want paths"))
	}
	if o.dur <= 0 || o.maxSess < 1 || o.maxEntry < 1 {
		errs = append(errs, errors.New("-dur, -max-sessions and -max-entries: want more than 0"))
	}
	return errors.Join(errs...)
}

var opts options

func init() {
	flag.StringVar(&opts.bin, "bin", "", "the sessiontree binary, built with testdata/pprof_overlay.go")
	flag.StringVar(&opts.db, "db", "", "database of serve and the driver's store (a SQLite path or a postgres:// URL)")
	flag.StringVar(&opts.peer, "peer", "", "the other database, for push and pull")
	flag.StringVar(&opts.pgURL, "pg", "", "a postgres:// URL whose connections to count")
	flag.DurationVar(&opts.dur, "dur", 10*time.Minute, "how long to run")
	flag.StringVar(&opts.out, "out", "soak.csv", "the CSV of samples")
	flag.StringVar(&opts.profDir, "prof", "", "a folder for profiles")
	flag.StringVar(&opts.tmpDir, "tmp", filepath.Join(os.TempDir(), "sessiontree-soak-tmp"), "$TMPDIR of the processes started")
	flag.IntVar(&opts.maxSess, "max-sessions", 30, "sessions kept")
	flag.IntVar(&opts.maxEntry, "max-entries", 80, "entries a session may hold before it is deleted")
}

var counts sync.Map // op -> *atomic.Int64

func count(op string) {
	v, _ := counts.LoadOrStore(op, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// soakCwd is the cwd of the soak's sessions: only they are deleted.
const soakCwd = "/soak"

const token = "soak-token-0123456789abcdef0123456789"

type client struct {
	base string
	hc   *http.Client
}

func (c *client) do(ctx context.Context, method, path string, body any, v any) (int, error) {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, c.base+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode < 300 {
		_ = json.Unmarshal(b, v)
	}
	return resp.StatusCode, nil
}

func msg(role, text string) map[string]any {
	if role == "user" {
		return map[string]any{"type": "message", "message": map[string]any{"role": "user", "content": text}}
	}
	return map[string]any{"type": "message", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}, "provider": "anthropic", "model": "claude-x"}}
}

var words = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")

func text() string {
	n := 3 + rand.IntN(20)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(words[rand.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.String()
}

// live sessions, shared by every worker.
var live struct {
	sync.Mutex
	ids []string
}

func pick() string {
	live.Lock()
	defer live.Unlock()
	if len(live.ids) == 0 {
		return ""
	}
	return live.ids[rand.IntN(len(live.ids))]
}

func refresh(ctx context.Context, st *store.Store) {
	ss, err := st.ListN(ctx, store.ListOptions{Cwd: soakCwd}, 1000)
	if err != nil {
		log.Printf("list: %v", err)
		return
	}
	ids := make([]string, 0, len(ss))
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	// steady data: drop the oldest beyond maxSess and any session grown past maxEntry
	for i, s := range ss {
		if i >= opts.maxSess || s.Entries > int64(opts.maxEntry) {
			if _, err := st.DeleteWith(ctx, sessiontree.DeleteOptions{Force: true}, s.ID); err != nil {
				log.Printf("delete %s: %v", s.ID, err)
			}
			count("api.evict")
		}
	}
	if len(ids) > opts.maxSess {
		ids = ids[:opts.maxSess]
	}
	live.Lock()
	live.ids = ids
	live.Unlock()
}

func httpWorker(ctx context.Context, c *client) {
	for ctx.Err() == nil {
		time.Sleep(time.Duration(60+rand.IntN(80)) * time.Millisecond)
		id := pick()
		op := rand.IntN(20)
		var code int
		var err error
		switch {
		case op == 0 || id == "":
			var r struct{ ID string }
			code, err = c.do(ctx, "POST", "/api/sessions", map[string]any{"cwd": soakCwd}, &r)
			count("http.create")
		case op <= 4:
			var info struct {
				LeafID *string `json:"leafId"`
			}
			c.do(ctx, "GET", "/api/sessions/"+id, nil, &info)
			leaf := ""
			if info.LeafID != nil {
				leaf = *info.LeafID
			}
			body := map[string]any{"entries": []any{msg("user", text()), msg("assistant", text())}}
			if rand.IntN(2) == 0 {
				body["ifLeaf"] = leaf
			}
			code, err = c.do(ctx, "POST", "/api/sessions/"+id+"/entries", body, nil)
			count(fmt.Sprintf("http.append.%d", code))
		case op == 5:
			code, err = c.do(ctx, "POST", "/api/sessions/"+id+"/entries", map[string]any{"ifLeaf": "deadbeef", "entries": []any{msg("user", "x")}}, nil)
			count(fmt.Sprintf("http.conflict.%d", code))
		case op == 6:
			code, err = c.do(ctx, "POST", "/api/sessions/"+id+"/entries", map[string]any{"entries": []any{map[string]any{"type": "message", "message": 42}}}, nil)
			count(fmt.Sprintf("http.bad.%d", code))
		case op == 7:
			code, err = c.do(ctx, "GET", "/api/sessions/0198f2a4-0000-7000-8000-000000000000/context", nil, nil)
			count(fmt.Sprintf("http.notfound.%d", code))
		case op == 8:
			code, err = c.do(ctx, "GET", "/api/sessions/"+id+"/context", nil, nil)
			count("http.context")
		case op == 9:
			code, err = c.do(ctx, "GET", fmt.Sprintf("/api/sessions/%s/entries?after=%d&limit=%d", id, rand.IntN(40), 1+rand.IntN(20)), nil, nil)
			count("http.entries")
		case op == 10:
			code, err = c.do(ctx, "GET", fmt.Sprintf("/api/search?q=%s&limit=%d", words[rand.IntN(len(words))], 1+rand.IntN(50)), nil, nil)
			count("http.search")
		case op == 11:
			code, err = c.do(ctx, "GET", "/api/sessions/"+id+"/graph", nil, nil)
			count("http.graph")
		case op == 12:
			code, err = c.do(ctx, "GET", "/api/sessions/"+id+"/tree", nil, nil)
			count("http.tree")
		case op == 13:
			code, err = c.do(ctx, "GET", "/api/sessions?limit=20", nil, nil)
			count("http.list")
		case op == 14:
			go stream(ctx, c, id)
		case op == 15:
			if rand.IntN(4) == 0 {
				code, err = c.do(ctx, "DELETE", "/api/sessions/"+id+"?force=1", nil, nil)
				count(fmt.Sprintf("http.delete.%d", code))
			}
		case op == 16:
			code, err = c.do(ctx, "GET", fmt.Sprintf("/api/search?q=%%22%s+%s%%22&literal=1", words[rand.IntN(len(words))], words[rand.IntN(len(words))]), nil, nil)
			count("http.search2")
		case op == 17:
			code, err = c.do(ctx, "POST", "/api/sessions/"+id+"/name", map[string]any{"name": text()}, nil)
			count(fmt.Sprintf("http.name.%d", code))
		case op == 18:
			if rand.IntN(3) == 0 {
				code, err = c.do(ctx, "POST", "/api/sessions/"+id+"/fork", map[string]any{"cwd": soakCwd}, nil)
				count(fmt.Sprintf("http.fork.%d", code))
			}
		default:
			code, err = c.do(ctx, "GET", "/api/sessions/"+id+"/branch?full=1", nil, nil)
			count("http.branch")
		}
		if err != nil && ctx.Err() == nil {
			count("http.err")
			log.Printf("http: %v", err)
		}
		_ = code
	}
}

var streamsOpen atomic.Int64

// stream opens an event stream on a raw connection and ends it cleanly or by RST.
func stream(ctx context.Context, c *client, id string) {
	streamsOpen.Add(1)
	defer streamsOpen.Add(-1)
	host := strings.TrimPrefix(c.base, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		return
	}
	fmt.Fprintf(conn, "GET /api/sessions/%s/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", id, host, token)
	conn.SetReadDeadline(time.Now().Add(time.Duration(1+rand.IntN(8)) * time.Second))
	br := bufio.NewReader(conn)
	n := 0
	for {
		_, err := br.ReadString('\n')
		if err != nil {
			break
		}
		n++
	}
	switch rand.IntN(3) {
	case 0: // RST
		conn.(*net.TCPConn).SetLinger(0)
		count("stream.rst")
	case 1:
		conn.(*net.TCPConn).CloseWrite()
		time.Sleep(100 * time.Millisecond)
		count("stream.halfclose")
	default:
		count("stream.close")
	}
	conn.Close()
}

func apiWorker(ctx context.Context, st *store.Store) {
	for i := 0; ctx.Err() == nil; i++ {
		time.Sleep(time.Duration(60+rand.IntN(80)) * time.Millisecond)
		if i%15 == 0 {
			refresh(ctx, st)
		}
		id := pick()
		op := rand.IntN(16)
		var err error
		switch {
		case op == 0 || id == "":
			var ds sessiontree.DatabaseSession
			ds, err = st.Create(ctx, store.CreateOptions{Cwd: soakCwd})
			if err == nil {
				ds.Close()
			}
			count("api.create")
		case op <= 4:
			var s *sessiontree.Session
			s, err = st.Resume(ctx, id, sessiontree.SessionOptions{})
			if err != nil {
				break
			}
			leaf, _ := s.Leaf(ctx)
			w := s
			if rand.IntN(2) == 0 {
				w = s.IfLeaf(leaf)
			}
			_, err = w.AppendMessage(ctx, json.RawMessage(fmt.Sprintf(`{"role":"user","content":%q}`, text())))
			if err == nil {
				_, err = s.AppendMessage(ctx, json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%q}],"provider":"p","model":"m"}`, text())))
			}
			if rand.IntN(3) == 0 { // on purpose: a stale guard
				_, e := s.IfLeaf("ffffffff").AppendMessage(ctx, json.RawMessage(`{"role":"user","content":"x"}`))
				var ce *sessiontree.ConflictError
				if errors.As(e, &ce) {
					count("api.conflict.ok")
				} else {
					count("api.conflict.other")
				}
			}
			s.Close()
			count("api.append")
		case op == 5:
			_, e := st.Resume(ctx, "0198f2a4-0000-7000-8000-00000000000f", sessiontree.SessionOptions{})
			if errors.Is(e, sessiontree.ErrNotFound) {
				count("api.notfound.ok")
			}
		case op == 6:
			var s *sessiontree.Session
			if s, err = st.Resume(ctx, id, sessiontree.SessionOptions{}); err == nil {
				_, err = s.Context(ctx, sessiontree.ContextOptions{})
				s.Close()
			}
			count("api.context")
		case op == 7:
			_, err = st.Search(ctx, words[rand.IntN(len(words))], store.SearchOptions{})
			count("api.search")
		case op == 8:
			var s *sessiontree.Session
			if s, err = st.Resume(ctx, id, sessiontree.SessionOptions{}); err == nil {
				fctx, cancel := context.WithTimeout(ctx, time.Duration(500+rand.IntN(3000))*time.Millisecond)
				go func() {
					defer s.Close()
					defer cancel()
					_ = sessiontree.Follow(fctx, s.Storage(), 0, func(sessiontree.Entry) error { return nil })
				}()
			}
			count("api.follow")
		case op == 9:
			if rand.IntN(3) == 0 {
				var ds sessiontree.DatabaseSession
				if ds, err = st.Fork(ctx, id, store.ForkOptions{}); err == nil {
					ds.Close()
				}
				count("api.fork")
			}
		case op == 10:
			if rand.IntN(4) == 0 {
				_, err = st.Delete(ctx, id)
				count("api.delete")
			}
		case op == 11:
			_, err = st.Info(ctx, id)
			count("api.info")
		case op == 12:
			var s *sessiontree.Session
			if s, err = st.Resume(ctx, id, sessiontree.SessionOptions{}); err == nil {
				_, err = s.Branch(ctx, "")
				s.Close()
			}
			count("api.branch")
		default:
			var s *sessiontree.Session
			if s, err = st.Resume(ctx, id, sessiontree.SessionOptions{}); err == nil {
				_, err = s.MoveTo(ctx, "", nil)
				s.Close()
			}
			count("api.moveroot")
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, sessiontree.ErrNotFound) {
			count("api.err")
			log.Printf("api: %v", err)
		}
	}
}

func cmd(args ...string) *exec.Cmd {
	c := exec.Command(opts.bin, append([]string{"--db", opts.db}, args...)...)
	c.Env = append(os.Environ(), "TMPDIR="+opts.tmpDir)
	return c
}

func tailWorker(ctx context.Context) {
	for ctx.Err() == nil {
		time.Sleep(time.Duration(5+rand.IntN(10)) * time.Second)
		id := pick()
		if id == "" {
			continue
		}
		c := cmd("tail", id, "-n", "5")
		c.Stdout = io.Discard
		if err := c.Start(); err != nil {
			log.Printf("tail: %v", err)
			continue
		}
		time.Sleep(time.Duration(2+rand.IntN(8)) * time.Second)
		if rand.IntN(2) == 0 {
			c.Process.Signal(syscall.SIGINT)
			count("tail.int")
		} else {
			c.Process.Kill()
			count("tail.kill")
		}
		c.Wait()
	}
}

func pushWorker(ctx context.Context) {
	for ctx.Err() == nil {
		time.Sleep(time.Duration(45+rand.IntN(30)) * time.Second)
		if ctx.Err() != nil {
			return
		}
		o, err := cmd("push", "--to", opts.peer).CombinedOutput()
		count("push")
		if err != nil {
			log.Printf("push: %v %s", err, lastLine(o))
			count("push.err")
		}
		if id := pick(); id != "" {
			o, err = cmd("pull", "--from", opts.peer, id).CombinedOutput()
			count("pull")
			if err != nil {
				log.Printf("pull: %v %s", err, lastLine(o))
				count("pull.err")
			}
		}
	}
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func procStat(pid int, key string) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, key+":") {
			f := strings.Fields(l)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return -1
}

func fds(pid int) int {
	e, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(e)
}

var reGor = regexp.MustCompile(`goroutine profile: total (\d+)`)
var reHeap = regexp.MustCompile(`# HeapInuse = (\d+)`)
var reHeapObj = regexp.MustCompile(`# HeapObjects = (\d+)`)

func get(u string) string {
	resp, err := http.Get(u)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func atoi(re *regexp.Regexp, s string) string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return "-1"
	}
	return m[1]
}

func size(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}

func saveProf(pp, tag string) {
	if opts.profDir == "" {
		return
	}
	os.MkdirAll(opts.profDir, 0o755)
	runtime.GC()
	if f, err := os.Create(filepath.Join(opts.profDir, tag+"_driver_heap")); err == nil {
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	if f, err := os.Create(filepath.Join(opts.profDir, tag+"_driver_goroutine")); err == nil {
		pprof.Lookup("goroutine").WriteTo(f, 1)
		f.Close()
	}
	for _, p := range []string{"goroutine?debug=1", "heap", "goroutine?debug=2"} {
		name := strings.NewReplacer("?", "_", "=", "").Replace(p)
		os.WriteFile(filepath.Join(opts.profDir, tag+"_"+name), []byte(get("http://"+pp+"/debug/pprof/"+p)), 0o644)
	}
}

func main() {
	flag.Parse()
	log.SetFlags(log.Ltime)
	if err := opts.validate(); err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(opts.tmpDir, 0o700); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.dur)
	defer cancel()
	pp := "127.0.0.1:" + strconv.Itoa(20000+rand.IntN(20000))
	sv := cmd("serve", "--addr", "127.0.0.1:0", "--token", token)
	sv.Env = append(sv.Env, "SOAK_PPROF="+pp)
	so, _ := sv.StdoutPipe()
	sv.Stderr = os.Stderr
	sv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := sv.Start(); err != nil {
		log.Fatal(err)
	}
	line, _ := bufio.NewReader(so).ReadString('\n')
	m := regexp.MustCompile(`at (http://[^/]+)/`).FindStringSubmatch(line)
	if m == nil {
		log.Fatalf("serve said %q", line)
	}
	go io.Copy(io.Discard, so)
	c := &client{base: m[1], hc: &http.Client{Timeout: 30 * time.Second}}
	log.Printf("serve pid %d at %s pprof %s", sv.Process.Pid, c.base, pp)

	st, err := store.OpenURL(ctx, opts.db, store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	var pg *pgx.Conn
	if opts.pgURL != "" {
		if pg, err = pgx.Connect(ctx, opts.pgURL); err != nil {
			log.Fatal(err)
		}
	}
	refresh(ctx, st)
	var wg sync.WaitGroup
	for _, f := range []func(){
		func() { httpWorker(ctx, c) },
		func() { apiWorker(ctx, st) },
		func() { tailWorker(ctx) },
		func() { pushWorker(ctx) },
	} {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}

	of, _ := os.Create(opts.out)
	fmt.Fprintln(of, "t_s,srv_rss_kb,srv_threads,srv_fds,srv_goroutines,srv_heapinuse,srv_heapobj,drv_goroutines,drv_heapinuse,drv_fds,streams,db_bytes,wal_bytes,shm_bytes,sessions,entries,pg_conns,pg_idle_in_tx,pg_dbsize,tmp_files,load1")
	start := time.Now()
	tick := time.NewTicker(10 * time.Second)
	samples := 0
	sample := func() {
		pid := sv.Process.Pid
		g := get("http://" + pp + "/debug/pprof/goroutine?debug=1")
		h := get("http://" + pp + "/debug/pprof/heap?debug=1")
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		var sessions, entries int64
		if ss, err := st.ListN(context.Background(), store.ListOptions{}, 5000); err == nil {
			sessions = int64(len(ss))
			for _, s := range ss {
				entries += s.Entries
			}
		}
		pgc, pgi, pgs := int64(-1), int64(-1), int64(-1)
		if pg != nil {
			pg.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE state LIKE 'idle in transaction%'), pg_database_size(current_database()) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&pgc, &pgi, &pgs)
		}
		tf, _ := os.ReadDir(opts.tmpDir)
		la, _ := os.ReadFile("/proc/loadavg")
		dbp := opts.db
		if strings.HasPrefix(dbp, "postgres") {
			dbp = "/nonexistent"
		}
		fmt.Fprintf(of, "%d,%d,%d,%d,%s,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s\n",
			int(time.Since(start).Seconds()), procStat(pid, "VmRSS"), procStat(pid, "Threads"), fds(pid),
			atoi(reGor, g), atoi(reHeap, h), atoi(reHeapObj, h),
			runtime.NumGoroutine(), ms.HeapInuse, fds(os.Getpid()), streamsOpen.Load(),
			size(dbp), size(dbp+"-wal"), size(dbp+"-shm"), sessions, entries, pgc, pgi, pgs, len(tf), strings.Fields(string(la))[0])
		of.Sync()
		samples++
		if samples%30 == 0 {
			saveProf(pp, fmt.Sprintf("t%03d", samples))
		}
		if samples == 6 {
			saveProf(pp, "early")
		}
	}
	sample()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			sample()
		}
	}
	wg.Wait()
	time.Sleep(10 * time.Second) // let streams and follows end
	sample()
	saveProf(pp, "late")
	counts.Range(func(k, v any) bool { log.Printf("count %s = %d", k, v.(*atomic.Int64).Load()); return true })
	sv.Process.Signal(syscall.SIGTERM)
	sv.Wait()
	st.Close()
}
