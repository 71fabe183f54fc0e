package main

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/internal/pipkg"
)

func TestPiOptions(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.VsPi || !slices.Equal(o.PiVersions, []string{piDefaultVersion}) {
		t.Errorf("parseFlags() = VsPi %v, PiVersions %v; want false, [%s]", o.VsPi, o.PiVersions, piDefaultVersion)
	}
	o, err = parseFlags([]string{"-pi-versions", "1.6.0,0.73.1"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.VsPi || !slices.Equal(o.PiVersions, []string{"1.6.0", "0.73.1"}) {
		t.Errorf("parseFlags(-pi-versions 1.6.0,0.73.1) = VsPi %v, PiVersions %v; want true, [1.6.0 0.73.1]", o.VsPi, o.PiVersions)
	}
	for _, tc := range []struct {
		backends []string
		vsPi     bool
		b        string
		want     bool
	}{
		{nil, true, "pi-1.6.0", true},
		{nil, false, "pi-1.6.0", false},
		{[]string{"pi"}, true, "pi-0.73.1", true},
		{[]string{"pi-1.6.0"}, true, "pi-0.73.1", false},
		{[]string{"pi-1.6.0"}, true, "pi-1.6.0", true},
		{[]string{"engine"}, true, "pi-1.6.0", false},
		{[]string{"pi"}, true, "engine", false},
	} {
		o := Options{Backends: tc.backends, VsPi: tc.vsPi, PiVersions: []string{"1.6.0", "0.73.1"}}
		if got := o.wants(tc.b); got != tc.want {
			t.Errorf("Options{Backends: %q, VsPi: %v}.wants(%q) = %v; want %v", tc.backends, tc.vsPi, tc.b, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string // "" for valid
	}{
		{"both releases", func(o *Options) { o.VsPi, o.PiVersions = true, []string{"1.6.0", "0.73.1"} }, ""},
		{"one release's rows", func(o *Options) { o.Backends = []string{"pi-1.6.0", "engine"} }, ""},
		{"every release's rows", func(o *Options) { o.Backends = []string{"pi"} }, ""},
		{"release not timed", func(o *Options) { o.Backends = []string{"pi-0.73.1"} }, `unknown backend "pi-0.73.1"`},
		{"range", func(o *Options) { o.PiVersions = []string{"^1.6"} }, `pi version "^1.6"`},
		{"twice", func(o *Options) { o.PiVersions = []string{"1.6.0", "1.6.0"} }, "pi version 1.6.0 given twice"},
		{"none", func(o *Options) { o.VsPi, o.PiVersions = true, nil }, "no pi versions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			tc.edit(&o)
			err := o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v; want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestPiLoader runs the loader script on each pi release already in the
// default cache (go run ./bench -vs-pi puts them there): open, resume and
// list on a small session, answers checked against ours. It never
// installs anything, so without node or a cached release (CI) it skips,
// and under -short it does not start node at all.
func TestPiLoader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node; not under -short")
	}
	ds, err := generate(3, ShapeCompacted, 1000, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.reference(context.Background()); err != nil { // our context, for pi's to match
		t.Fatal(err)
	}
	for _, v := range []string{piDefaultVersion, piLegacyVersion} {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			pi, err := startPi(ctx, "", v, false, t.Logf)
			if errors.Is(err, errNoNode) || errors.Is(err, errPiNotInstalled) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer pi.close()
			if pi.backend != "pi-"+v || pi.pkg != pipkg.Package(v) {
				t.Errorf("startPi(%s) = backend %q, package %q", v, pi.backend, pi.pkg)
			}
			for _, op := range []string{"open", "resume"} {
				rep, err := pi.call(piRequest{Op: op, File: ds.File, N: 2})
				if err != nil {
					t.Fatalf("%s: %v", op, err)
				}
				want := map[string]int{"open": 0, "resume": ds.ContextMessages}[op]
				if rep.Leaf != ds.Leaf || rep.Messages != want || rep.NS <= 0 {
					t.Errorf("%s = leaf %s, %d messages, %v ns; want leaf %s, %d messages, > 0 ns", op, rep.Leaf, rep.Messages, rep.NS, ds.Leaf, want)
				}
			}
			rep, err := pi.call(piRequest{Op: "list", File: filepath.Dir(ds.File), Cwd: benchCwd, N: 1})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if rep.Messages != 1 {
				t.Errorf("list found %d sessions; want 1", rep.Messages)
			}
			rep, err = pi.call(piRequest{Op: "memory", Kind: "resume", File: ds.File})
			if err != nil || rep.Heap == 0 {
				t.Errorf("memory = heap %d, %v; want a heap growth", rep.Heap, err)
			}
		})
	}
}
