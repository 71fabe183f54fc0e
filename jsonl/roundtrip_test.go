package jsonl_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/storetest"
)

// fixtureDirs are the folders of files pi wrote: by 0.73.1 and by 1.6.0.
var fixtureDirs = []string{"pi", "pi1"}

// allFixtures lists the fixtures of every folder in fixtureDirs, named
// "<folder>/<file>".
func allFixtures(t *testing.T) []storetest.PiFixture {
	var out []storetest.PiFixture
	for _, dir := range fixtureDirs {
		for _, fx := range storetest.PiFixtures(t, filepath.Join("..", "testdata", dir)) {
			fx.Name = dir + "/" + fx.Name
			out = append(out, fx)
		}
	}
	return out
}

// TestRoundTrip opens every pi file, writes its entries to a new file and
// reads that back: the entries are the same JSON values (byte for byte
// for version-3 files), and pi's answers still hold.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, fx := range allFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			src := open(t, fx.Path, jsonl.Options{ReadOnly: true, Mode: jsonl.Strict})
			log, err := src.Log(ctx, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			meta, _ := src.Meta(ctx)
			path := filepath.Join(t.TempDir(), "copy.jsonl")
			dst, err := jsonl.Create(ctx, path, meta, jsonl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := dst.AppendBatch(ctx, log); err != nil {
				t.Fatal(err)
			}
			if err := dst.Close(); err != nil {
				t.Fatal(err)
			}
			// Writable: the checker replays appends pi refused.
			back := open(t, path, jsonl.Options{Mode: jsonl.Strict})
			got, err := back.Log(ctx, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(log) {
				t.Fatalf("copy has %d entries; want %d", len(got), len(log))
			}
			var orig [][]byte
			if src.Report().Version == 3 {
				data, err := os.ReadFile(fx.Path)
				if err != nil {
					t.Fatal(err)
				}
				orig = bytes.Split(bytes.TrimSpace(data), []byte("\n"))[1:]
			}
			for i := range got {
				if !jsonEqual(t, got[i].Raw, log[i].Raw) {
					t.Errorf("entry %d: copy %s; want the JSON value %s", i+1, got[i].Raw, log[i].Raw)
				}
				if orig != nil && !bytes.Equal(got[i].Raw, orig[i]) {
					t.Errorf("entry %d: copy %s; want the original line %s", i+1, got[i].Raw, orig[i])
				}
			}
			if got, want := strings.Count(readFile(t, path), "\n"), len(log)+1; got != want {
				t.Errorf("copy has %d lines; want %d", got, want)
			}
			if r := back.Report(); r.Version != 3 || len(r.Warnings) != 0 {
				t.Errorf("copy Report() = %+v", r)
			}
			storetest.CheckPi(t, back, fx.Want)
		})
	}
}

// TestPiFixturesAllModes opens every fixture in the other modes,
// read-only and for writing (on a copy), and checks pi's answers.
func TestPiFixturesAllModes(t *testing.T) {
	for _, fx := range allFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			// Strict is the root harness's way (TestPiFixtures). The
			// checker replays appends pi refused, which needs a
			// writable copy.
			dir, name := filepath.Dir(fx.Path), filepath.Base(fx.Path)
			for _, mode := range []jsonl.Mode{jsonl.Recover, jsonl.Lenient} {
				st := open(t, fx.Path, jsonl.Options{ReadOnly: true, Mode: mode})
				if r := st.Report(); len(r.Warnings) != 0 || r.Torn != nil {
					t.Errorf("%v: Report() = %+v; want a clean file", mode, r)
				}
				storetest.CheckPi(t, open(t, copyFixtureFrom(t, dir, name), jsonl.Options{Mode: mode}), fx.Want)
			}
			st := open(t, copyFixtureFrom(t, dir, name), jsonl.Options{})
			if st.Report().Version == 3 {
				e := appendUser(t, st, "appended to a pi file")
				if want := fx.Want.LeafID; string(want) != "null" && e.ParentID != strings.Trim(string(want), `"`) {
					t.Errorf("append to %s: parent %q; want pi's leaf %s", fx.Name, e.ParentID, want)
				}
			}
		})
	}
}

var _ sessiontree.Storage = (*jsonl.Storage)(nil)
