package store_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// piDir is the pi fixtures: files pi wrote, with pi's answers.
const piDir = "../testdata/pi"

// openStore opens a new store in a temporary directory: a copy of an
// empty database made once (emptyStore). Its cleanup checks the whole
// database (the engine's check and the search index's) and closes it, so
// every test is an integrity test too. Tests of how a database is made
// open one with openStoreAt.
func openStore(t testing.TB) *store.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	emptyStore.CopyTo(t, path)
	return openStoreAt(t, path)
}

// emptyStore is a new store's database, made once per test binary.
var emptyStore = testdb.New(func(ctx context.Context, path string) error {
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	return s.Close()
})

func openStoreAt(t testing.TB, path string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), path, afterTestCheck)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkAndClose(t, s) })
	return s
}

// afterTestCheck opens the stores that are checked after their test with
// a tenth of the index comparison's default bound: the race detector
// makes each trigram lookup some fifty times dearer, and the tests of the
// comparison itself (indexcheck_test.go) use the default.
var afterTestCheck = store.Options{Engine: engine.Options{CheckLookups: 500}}

// copyFile copies a file, mode 0600.
func copyFile(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustImport(t testing.TB, s *store.Store, paths []string, opts store.ImportOptions) store.ImportReport {
	t.Helper()
	rep, err := s.Import(context.Background(), paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// builder appends entries with chosen ids and increasing timestamps, so
// that tests can state their expectations by id.
type builder struct {
	t     testing.TB
	st    sessiontree.DatabaseSession
	clock time.Time
}

func newBuilder(t testing.TB, st sessiontree.DatabaseSession) *builder {
	return &builder{t: t, st: st, clock: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
}

func (b *builder) tick() string {
	b.clock = b.clock.Add(time.Second)
	return sessiontree.FormatTime(b.clock)
}

// add appends an entry of type typ with id and the given fields (a JSON
// object's members without braces).
func (b *builder) add(typ sessiontree.EntryType, id, fields string) sessiontree.Entry {
	b.t.Helper()
	e, err := b.st.Append(context.Background(), sessiontree.Draft{Type: typ, ID: id, Timestamp: b.tick(),
		Fields: json.RawMessage("{" + fields + "}")}, sessiontree.AppendOptions{})
	if err != nil {
		b.t.Fatalf("append %s %s: %v", typ, id, err)
	}
	return e
}

func (b *builder) user(id, text string) sessiontree.Entry {
	return b.add(sessiontree.TypeMessage, id, `"message":{"role":"user","content":`+jsonString(text)+`,"timestamp":1}`)
}

func (b *builder) assistant(id, text string) sessiontree.Entry {
	return b.add(sessiontree.TypeMessage, id, `"message":{"role":"assistant","content":[{"type":"text","text":`+jsonString(text)+
		`}],"provider":"anthropic","model":"claude","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.001}},"timestamp":2}`)
}

func (b *builder) label(id, target, label string) sessiontree.Entry {
	return b.add(sessiontree.TypeLabel, id, `"targetId":`+jsonString(target)+`,"label":`+jsonString(label))
}

func (b *builder) name(id, name string) sessiontree.Entry {
	return b.add(sessiontree.TypeSessionInfo, id, `"name":`+jsonString(name))
}

func (b *builder) moveTo(target string) sessiontree.Entry {
	b.t.Helper()
	e, err := b.st.SetLeaf(context.Background(), target, sessiontree.AppendOptions{})
	if err != nil {
		b.t.Fatalf("SetLeaf(%q): %v", target, err)
	}
	return e
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// logOf returns a session's whole log.
func logOf(t testing.TB, st sessiontree.Storage) []sessiontree.Entry {
	t.Helper()
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

func ids(entries []sessiontree.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.ID
	}
	return out
}

// contextOf returns the context messages at the session's leaf.
func contextOf(t testing.TB, st sessiontree.Storage, from string) []string {
	t.Helper()
	c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(context.Background(), sessiontree.ContextOptions{From: from})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(c.Messages))
	for i, m := range c.Messages {
		out[i] = string(m)
	}
	return out
}

func leafOf(t testing.TB, st sessiontree.Storage) string {
	t.Helper()
	leaf, err := st.Leaf(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

func labelsOf(t testing.TB, st sessiontree.Storage) map[string]string {
	t.Helper()
	l, err := st.Labels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func nameOf(t testing.TB, st sessiontree.Storage) string {
	t.Helper()
	n, err := st.Name(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func metaOf(t testing.TB, st sessiontree.Storage) sessiontree.SessionMeta {
	t.Helper()
	m, err := st.Meta(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustCreate(t testing.TB, s *store.Store, opts store.CreateOptions) sessiontree.DatabaseSession {
	t.Helper()
	st, err := s.Create(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// piFixtures returns the pi fixtures a test imports: all of them, or
// under the race detector (CI's run) and with -short a few that cover
// every file version, Japanese text, compactions, branches and labels
// (the root package's TestPiFixtures checks every one).
func piFixtures(t testing.TB) []storetest.PiFixture {
	t.Helper()
	all := storetest.PiFixtures(t, piDir)
	if !storetest.RaceEnabled && !testing.Short() {
		return all
	}
	var out []storetest.PiFixture
	for _, fx := range all {
		switch fx.Name {
		case "legacy-v1-compaction", "legacy-v2-hookmessage", "session-002", "session-003", "session-010":
			out = append(out, fx)
		}
	}
	return out
}

func fixturePaths(fxs []storetest.PiFixture) []string {
	out := make([]string, len(fxs))
	for i, fx := range fxs {
		out[i] = fx.Path
	}
	return out
}
