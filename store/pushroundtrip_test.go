package store_test

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/storetest"
)

// sumOrder compares costs, sums of floats, up to the order of their
// terms, which a copy's keys may change.
var sumOrder = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) })

// TestPushRoundTrip imports every pi fixture (lenient, as pi reads them)
// into SQLite, pushes it to PostgreSQL and from there to another SQLite
// database: each session reads the same on all three, its export is the
// same bytes and the usage report is the same (but for
// testdata/piedge/invalid-utf8, which PostgreSQL cannot store). Under
// -short it pushes one file of testdata/pi of each kind
// (storetest.FixturePathKinds: session-000 of the twelve session-NNN)
// and every edge case of testdata/piedge.
func TestPushRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, pg, back := openStore(t), openPostgresStore(t), openStore(t)
	var paths []string
	for _, dir := range []struct {
		glob  string
		kinds bool // under -short, one file of each kind
	}{{"../testdata/pi/*.jsonl", true}, {"../testdata/piedge/*.jsonl", false}} {
		m, err := filepath.Glob(dir.glob)
		if err != nil {
			t.Fatal(err)
		}
		if dir.kinds && testing.Short() {
			m = storetest.FixturePathKinds(m)
		}
		for _, p := range m {
			// PostgreSQL stores an entry as text, which cannot hold
			// bytes that are not UTF-8: the push fails that session.
			if filepath.Base(p) != "invalid-utf8.jsonl" {
				paths = append(paths, p)
			}
		}
	}
	rep, err := src.Import(ctx, paths, store.ImportOptions{Mode: jsonl.Lenient})
	if err != nil {
		t.Fatal(err)
	}
	// Each hop first pushes the first file of each kind and every edge
	// case three entries a batch, so that it appends across batch
	// boundaries on every kind of fixture, then every session in default
	// batches: the eleven other session-NNN files, of session-000's kind
	// (one generator's), three entries a batch, were two thirds of the
	// test's batches and of its time, and took no other path.
	kinds := map[string]bool{} // by base name: a report's paths are resolved
	for _, p := range storetest.FixturePathKinds(paths) {
		kinds[filepath.Base(p)] = true
	}
	batched := map[string]bool{}
	var first []string
	for _, f := range rep.Files {
		if f.SessionID != "" && f.Outcome != store.OutcomeFailed && kinds[filepath.Base(f.Path)] && !batched[f.SessionID] {
			batched[f.SessionID] = true
			first = append(first, f.SessionID)
		}
	}
	if len(first) == 0 {
		t.Fatal("no session to push a few entries a batch") // none would push every session
	}
	for _, hop := range []struct{ from, to *store.Store }{{src, pg}, {pg, back}} {
		for _, opts := range []store.PushOptions{{Sessions: first, BatchEntries: 3}, {}} {
			prep, err := store.Push(ctx, hop.from, hop.to, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range prep.Results {
				want := store.PushPushed
				if opts.Sessions == nil && batched[r.Session] {
					want = store.PushUpToDate
				}
				if r.Status != want {
					t.Errorf("push %s (%d a batch): %s %v; want %s", r.Session, opts.BatchEntries, r.Status, r.Err, want)
				}
			}
		}
	}
	for _, by := range sessiontree.UsageGroupings {
		want, err := src.Usage(ctx, sessiontree.UsageQuery{By: by})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []*store.Store{pg, back} {
			got, err := s.Usage(ctx, sessiontree.UsageQuery{By: by})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, sumOrder); diff != "" {
				t.Errorf("usage by %s differs (-source +copy):\n%s", by, diff)
			}
		}
	}
	seen := map[string]bool{}
	for _, f := range rep.Files {
		if f.SessionID == "" || seen[f.SessionID] || f.Outcome == store.OutcomeFailed {
			continue
		}
		seen[f.SessionID] = true
		t.Run(filepath.Base(f.Path), func(t *testing.T) {
			wantSameSession(t, src, pg, f.SessionID)
			wantSameSession(t, src, back, f.SessionID)
			var a, b bytes.Buffer
			if err := src.Export(ctx, f.SessionID, &a, store.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := back.Export(ctx, f.SessionID, &b, store.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("export differs after the round trip:\n%s\nwant\n%s", b.Bytes(), a.Bytes())
			}
		})
	}
}
