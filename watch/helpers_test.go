package watch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/watch"
)

// deadline bounds every wait of a test for the watcher: past it the test
// fails. It is long, for a loaded machine; a wait that succeeds ends as
// soon as the watcher says it has caught up.
const deadline = 30 * time.Second

// running is a Watch running in the background of a test, over a store
// of its own.
type running struct {
	t      testing.TB
	s      *store.Store
	events chan watch.Event
	cancel context.CancelFunc
	done   chan struct{}
	sum    watch.Summary
	err    error
	seen   []watch.Event // every event read so far
}

// openStore opens a store in a temporary folder, a copy of emptyStore;
// its cleanup checks the database and closes it.
func openStore(t testing.TB) *store.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	emptyStore.CopyTo(t, path)
	s, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(context.Background(), ""); err != nil {
			t.Errorf("Check: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// emptyStore is a new store's database, made once per test binary.
var emptyStore = testdb.New(func(ctx context.Context, path string) error {
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	return s.Close()
})

// startWatch runs Watch on paths over s until the test stops it (or
// ends). Settle defaults to an hour, so that no problem is reported
// unless a test asks for it. A Report in opts is called with each event
// first, from the watcher's goroutine.
func startWatch(t testing.TB, s *store.Store, paths []string, opts watch.Options) *running {
	t.Helper()
	if opts.Settle == 0 {
		opts.Settle = time.Hour
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, s: s, events: make(chan watch.Event, 1<<16), cancel: cancel, done: make(chan struct{})}
	hook := opts.Report
	opts.Report = func(e watch.Event) {
		if hook != nil {
			hook(e)
		}
		select {
		case r.events <- e:
		default:
			panic("test event buffer full")
		}
	}
	go func() {
		defer close(r.done)
		r.sum, r.err = watch.Watch(ctx, s, paths, opts)
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

// watching starts a watch of a new folder holding one session file with
// n entries, and waits until it has imported them.
func watching(t testing.TB, n int, opts watch.Options) (dir string, s *store.Store, a *sessionFile, w *running) {
	t.Helper()
	dir = t.TempDir()
	s = openStore(t)
	a = newSessionFile(t, filepath.Join(dir, "a.jsonl"), "aaaa-session")
	a.add(n)
	w = startWatch(t, s, []string{dir}, opts)
	w.caughtUp(a.id, n)
	return dir, s, a, w
}

// stop stops the watch and returns its summary, failing the test on an
// error.
func (r *running) stop() watch.Summary {
	r.t.Helper()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(deadline):
		r.t.Fatal("Watch did not stop")
	}
	if r.err != nil {
		r.t.Errorf("Watch: %v", r.err)
	}
	return r.sum
}

// next returns the next event, failing the test past the deadline.
func (r *running) next(until time.Time, what string) watch.Event {
	r.t.Helper()
	select {
	case e := <-r.events:
		r.seen = append(r.seen, e)
		if e.Kind == watch.Problem || e.Kind == watch.Unsettled {
			r.t.Logf("%s: %s: %v %v", e.Kind, e.Path, e.Result.Err, e.Result.Torn)
		}
		return e
	case <-r.done:
		r.t.Fatalf("Watch ended (%v) while waiting for %s", r.err, what)
	case <-time.After(time.Until(until)):
		r.t.Fatalf("no %s within %v", what, deadline)
	}
	panic("unreachable")
}

// waitFor waits for an event ok accepts.
func (r *running) waitFor(what string, ok func(watch.Event) bool) watch.Event {
	r.t.Helper()
	until := time.Now().Add(deadline)
	for {
		if e := r.next(until, what); ok(e) {
			return e
		}
	}
}

// caughtUp waits until the watcher says it has caught up with the
// session id holding n entries: the state the test just wrote. Every
// event of the import that got there is read by then. (A round that
// catches up with several files says so once: wait for them together,
// with waitFor.)
func (r *running) caughtUp(id string, n int) {
	r.t.Helper()
	r.waitFor(fmt.Sprintf("catching up with %d entries in %s", n, id), func(e watch.Event) bool {
		return e.Kind == watch.CaughtUp && entryCount(r.t, r.s, id) == n
	})
}

// entryCount is how many entries session id holds, -1 if it is not in
// the store.
func entryCount(t testing.TB, s *store.Store, id string) int {
	t.Helper()
	st, err := s.OpenSession(context.Background(), id)
	if errors.Is(err, sessiontree.ErrNotFound) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}

// drain reads the events already reported, and counts those of a kind
// seen so far.
func (r *running) drain(k watch.Kind) int {
	for {
		select {
		case e := <-r.events:
			r.seen = append(r.seen, e)
			continue
		default:
		}
		return r.count(k)
	}
}

// count counts the events of a kind seen so far.
func (r *running) count(k watch.Kind) int {
	n := 0
	for _, e := range r.seen {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// sessionFile writes session files line by line as pi does.
type sessionFile struct {
	t    testing.TB
	path string
	id   string
	n    int    // entries written
	leaf string // the last entry's id
}

// newSessionFile writes a header to a new file at path.
func newSessionFile(t testing.TB, path, id string) *sessionFile {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &sessionFile{t: t, path: path, id: id}
	f.write(os.O_CREATE|os.O_EXCL|os.O_WRONLY, header(id))
	return f
}

func header(id string) string {
	return fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":"2026-12-01T10:00:00.000Z","cwd":"/home/user/app"}`+"\n", id)
}

// line returns the next entry's line (a user message with text), without
// its newline, and takes it as written.
func (f *sessionFile) line(text string) string {
	f.n++
	id := fmt.Sprintf("%s%04d", f.id[:4], f.n)
	parent := "null"
	if f.leaf != "" {
		parent = fmt.Sprintf("%q", f.leaf)
	}
	f.leaf = id
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-12-01T10:00:%02d.000Z","message":{"role":"user","content":%q,"timestamp":1796119200000}}`,
		id, parent, f.n%60, text)
}

// add appends n user messages, one write each.
func (f *sessionFile) add(n int) {
	f.t.Helper()
	for range n {
		f.write(os.O_WRONLY|os.O_APPEND, f.line(fmt.Sprintf("message %d of %s", f.n+1, f.id))+"\n")
	}
}

// write writes s to the file opened with flag.
func (f *sessionFile) write(flag int, s string) {
	f.t.Helper()
	fd, err := os.OpenFile(f.path, flag, 0o600)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := fd.WriteString(s); err != nil {
		f.t.Fatal(err)
	}
	if err := fd.Close(); err != nil {
		f.t.Fatal(err)
	}
}

// rewriting starts a rewrite of the file whole, as pi rewrites a file it
// migrates: the file is cut to nothing, and rewrite writes lines back,
// the same entries in other bytes (a space after the first colon); done
// ends it. lines are the file's lines as they were, each with its
// newline.
func (f *sessionFile) rewriting() (lines []string, rewrite func([]string), done func()) {
	f.t.Helper()
	old, err := os.ReadFile(f.path)
	if err != nil {
		f.t.Fatal(err)
	}
	lines = strings.SplitAfter(string(old), "\n")
	lines = lines[:len(lines)-1] // after the last newline
	fd, err := os.OpenFile(f.path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	rewrite = func(lines []string) {
		for _, l := range lines {
			if _, err := fd.WriteString(strings.Replace(l, `":`, `": `, 1)); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	done = func() {
		if err := fd.Close(); err != nil {
			f.t.Fatal(err)
		}
	}
	return lines, rewrite, done
}

// claimSession takes a claim on session id for another writer, for an
// hour, as an agent writing to it through the store would.
func claimSession(t testing.TB, s *store.Store, id string) sessiontree.Claim {
	t.Helper()
	st, err := s.OpenSession(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	claimer, ok := st.(sessiontree.Claimer)
	if !ok {
		t.Fatalf("%T is no sessiontree.Claimer", st)
	}
	claim, err := claimer.Claim(context.Background(), "other-agent", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return claim
}
