package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// A/B benchmarks of the read path (issue 14): the engine's read of the
// active path and the context against the plain read (the
// four fields as four columns, one row per entry, scanned through
// database/sql and through the engine's connection), and the statement
// cache against none and against database/sql's prepared statements. Run
// every side in one run, so that they are compared on one machine state:
//
//	go test ./engine -run '^$' -bench 'AB$' -count 6 -benchtime 20x

var (
	abOnce sync.Once
	abFx   abFixtures
	abErr  error
)

// abFixtures are four sessions: linear ones of 10,000 and 100,000
// messages (the active path is the whole log) and compacted ones of the
// same sizes, whose leaf's compaction boundary is 200 entries back.
type abFixtures struct {
	path     string
	sessions []abSession
}

type abSession struct {
	name, id string
	path     int // entries on the leaf's active path
	msgs     int // messages in the leaf's context
}

func loadABFixtures(b *testing.B) abFixtures {
	b.Helper()
	abOnce.Do(func() { abFx, abErr = buildABFixtures() })
	if abErr != nil {
		b.Fatal(abErr)
	}
	return abFx
}

func buildABFixtures() (abFixtures, error) {
	ctx := context.Background()
	fx := abFixtures{path: filepath.Join(benchDir, "ab.db")}
	db, err := engine.Open(ctx, fx.path, engine.Options{})
	if err != nil {
		return fx, err
	}
	defer db.Close()
	for _, size := range []int{10000, 100000} {
		for _, compacted := range []bool{false, true} {
			g := &gen{prefix: fmt.Sprintf("s%dc%t", size, compacted)}
			var entries []sessiontree.Entry
			name, path := fmt.Sprintf("linear-%dk", size/1000), size
			if compacted {
				// As in buildFixtures: a compaction 150 entries before the
				// leaf keeping the 50 before it.
				entries = g.chain("", size-151)
				kept := entries[len(entries)-50].ID
				comp := mustEntry(sessiontree.Draft{Type: sessiontree.TypeCompaction,
					Fields: []byte(`{"summary":"Earlier work.","firstKeptEntryId":"` + kept + `","tokensBefore":150000}`)},
					g.id(), entries[len(entries)-1].ID)
				entries = append(entries, comp)
				entries = append(entries, g.chain(comp.ID, 150)...)
				name, path = fmt.Sprintf("compacted-%dk", size/1000), 201
			} else {
				entries = g.chain("", size)
			}
			st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/work/ab"})
			if err != nil {
				return fx, err
			}
			if err := importAll(ctx, st, entries); err != nil {
				return fx, err
			}
			c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
			if err != nil {
				return fx, err
			}
			fx.sessions = append(fx.sessions, abSession{name: name, id: st.ID(), path: path, msgs: len(c.Messages)})
		}
	}
	return fx, db.Check(ctx, "")
}

// BenchmarkReadPathAB reads the leaf's active path (op=path) and builds
// the context at the leaf (op=context) of each fixture, every way of
// reading the path side by side.
func BenchmarkReadPathAB(b *testing.B) {
	fx := loadABFixtures(b)
	db := openBench(b, fx.path)
	ctx := context.Background()
	for _, s := range fx.sessions {
		st, leaf := openAtLeaf(b, db, s.id)
		for _, op := range []string{"path", "context"} {
			for _, how := range []engine.PathRead{engine.PathEngine, engine.PathRows, engine.PathPlain, engine.PathSQL} {
				b.Run(fmt.Sprintf("%s/op=%s/read=%s", s.name, op, how), func(b *testing.B) {
					via, done, err := engine.WithPathRead(ctx, st, how)
					if err != nil {
						b.Fatal(err)
					}
					defer done()
					if op == "context" {
						benchContext(b, via, s.msgs)
						return
					}
					measureCPU(b)
					for b.Loop() {
						p, err := via.Path(ctx, leaf)
						if err != nil || len(p) != s.path {
							b.Fatal(len(p), err)
						}
					}
				})
			}
		}
	}
}

// openAtLeaf opens session id and reads its leaf.
func openAtLeaf(b *testing.B, db *engine.DB, id string) (*engine.Storage, string) {
	b.Helper()
	ctx := context.Background()
	st, err := db.OpenSession(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	leaf, err := st.Leaf(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return st, leaf
}

// benchContext builds the context at st's leaf, which has msgs messages.
func benchContext(b *testing.B, st sessiontree.Storage, msgs int) {
	ctx := context.Background()
	sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	measureCPU(b)
	for b.Loop() {
		c, err := sess.Context(ctx, sessiontree.ContextOptions{})
		if err != nil || len(c.Messages) != msgs {
			b.Fatal(len(c.Messages), err)
		}
	}
}

// BenchmarkStmtCacheAB runs an append, a context build (the compacted
// 100k fixture's, 201 entries) and an entry lookup with the connections'
// statement cache on and off, and the lookup and context also through
// database/sql's own prepared statements.
func BenchmarkStmtCacheAB(b *testing.B) {
	fx := loadABFixtures(b)
	ctx := context.Background()
	var s abSession
	for _, x := range fx.sessions {
		if x.name == "compacted-100k" {
			s = x
		}
	}
	// Appends run only through the engine's connection: database/sql's
	// side would be a second implementation of the append.
	for _, cache := range []string{"on", "off"} {
		b.Run("op=append/cache="+cache, func(b *testing.B) {
			db := openBench(b, filepath.Join(b.TempDir(), "append.db"))
			engine.SetStmtCache(db, cache == "on")
			st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/work/append"})
			if err != nil {
				b.Fatal(err)
			}
			measureCPU(b)
			for b.Loop() {
				if _, err := st.Append(ctx, benchDraft, sessiontree.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	db := openBench(b, fx.path)
	st, leaf := openAtLeaf(b, db, s.id)
	for _, cache := range []string{"on", "off", "sql"} {
		b.Run("op=context/cache="+cache, func(b *testing.B) {
			engine.SetStmtCache(db, cache != "off")
			how := engine.PathEngine
			if cache == "sql" {
				how = engine.PathSQL
			}
			via, done, err := engine.WithPathRead(ctx, st, how)
			if err != nil {
				b.Fatal(err)
			}
			defer done()
			benchContext(b, via, s.msgs)
		})
	}
	for _, cache := range []string{"on", "off", "sql"} {
		b.Run("op=entry/cache="+cache, func(b *testing.B) {
			engine.SetStmtCache(db, cache != "off")
			read := st.Entry
			if cache == "sql" {
				r, done, err := engine.EntrySQL(ctx, st)
				if err != nil {
					b.Fatal(err)
				}
				defer done()
				read = r
			}
			measureCPU(b)
			for b.Loop() {
				if e, err := read(ctx, leaf); err != nil || e.ID != leaf {
					b.Fatal(e.ID, err)
				}
			}
		})
	}
	engine.SetStmtCache(db, true)
}
