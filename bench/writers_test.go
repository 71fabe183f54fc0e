package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestMain lets the test binary run as any child of the bench (a writers
// child, the spawner, an import child), as the bench binary does: the
// workloads that start them start os.Executable.
func TestMain(m *testing.M) {
	if status, ok := runChild(os.Args); ok {
		os.Exit(status)
	}
	os.Exit(m.Run())
}

// TestWriterChild runs the child's protocol in process: two rounds of 3
// appends to each of two sessions, then the end of input.
func TestWriterChild(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	for range 2 {
		st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: benchCwd})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID())
	}
	var out strings.Builder
	if err := runWriterChild(ctx, []string{backendEngine, path, "3", strings.Join(ids, ",")}, strings.NewReader("go\ngo\n"), &out); err != nil {
		t.Fatalf("runWriterChild: %v", err)
	}
	if got := out.String(); got != "ready\ndone\ndone\n" {
		t.Errorf("child said %q; want ready, done, done", got)
	}
	for _, id := range ids {
		st, err := db.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s, err := st.Stats(ctx); err != nil || s.Entries != 6 {
			t.Errorf("session %s: %d entries, %v; want 6", id, s.Entries, err)
		}
	}
	// With $BENCH_WRITER_CPUPROFILE the child profiles its rounds.
	prefix := filepath.Join(t.TempDir(), "writer.prof")
	t.Setenv(writerProfileEnv, prefix)
	if err := runWriterChild(ctx, []string{backendEngine, path, "1", ids[0]}, strings.NewReader("go\n"), &out); err != nil {
		t.Fatalf("runWriterChild with a profile: %v", err)
	}
	if fi, err := os.Stat(fmt.Sprintf("%s.%d", prefix, os.Getpid())); err != nil || fi.Size() == 0 {
		t.Errorf("the child's profile: %v, %v; want a profile written", fi, err)
	}
	for _, args := range [][]string{
		{backendEngine, path, "3"},
		{backendEngine, path, "zero", ids[0]},
		{"mysql", path, "3", ids[0]},
	} {
		if err := runWriterChild(ctx, args, strings.NewReader(""), &out); err == nil {
			t.Errorf("runWriterChild(%q) = nil; want an error", args)
		}
	}
}
