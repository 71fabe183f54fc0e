//go:build unix

package fsx_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/fsx"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.jsonl")
	if err := os.WriteFile(file, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("pipe", link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		mode fs.FileMode // of the refusal; 0: opened
	}{
		{file, 0},
		{fifo, fs.ModeNamedPipe},
		{link, fs.ModeNamedPipe},
		{dir, fs.ModeDir},
		{"/dev/null", fs.ModeDevice | fs.ModeCharDevice},
	}
	for _, tt := range tests {
		f, err := fsx.Open(tt.path, os.O_RDONLY, "session file")
		var nr *sessiontree.NotRegularFileError
		switch {
		case tt.mode == 0 && err != nil:
			t.Errorf("Open(%s) = %v; want the file", tt.path, err)
		case tt.mode != 0 && (!errors.As(err, &nr) || nr.Mode != tt.mode || nr.Path != tt.path || !errors.Is(err, sessiontree.ErrNotRegularFile)):
			t.Errorf("Open(%s) = %v; want a NotRegularFileError of mode %v", tt.path, err, tt.mode)
		}
		if f != nil {
			f.Close()
		}
	}
	if _, err := fsx.Open(filepath.Join(dir, "none"), os.O_RDONLY, "session file"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v; want ErrNotExist", err)
	}
}

func TestWriteTarget(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.jsonl")
	if err := os.WriteFile(file, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"to-file":  "f.jsonl",
		"to-link":  "to-file",
		"dangling": "sub/new.jsonl",
		"to-pipe":  "pipe",
		"to-null":  "/dev/null",
		"loop":     "loop",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		path string
		want fsx.Target
		err  bool
	}{
		{file, fsx.Target{Path: file}, false},
		{in("missing.jsonl"), fsx.Target{Path: in("missing.jsonl")}, false},
		{in("to-file"), fsx.Target{Path: file}, false},
		{in("to-link"), fsx.Target{Path: file}, false},
		{in("dangling"), fsx.Target{Path: in("sub/new.jsonl")}, false},
		{fifo, fsx.Target{Path: fifo, Direct: true}, false},
		{in("to-pipe"), fsx.Target{Path: in("to-pipe"), Direct: true}, false},
		{in("to-null"), fsx.Target{Path: in("to-null"), Direct: true}, false},
		{dir, fsx.Target{}, true},
		{in("loop"), fsx.Target{}, true},
	}
	for _, tt := range tests {
		got, err := fsx.WriteTarget(tt.path, "session file")
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("WriteTarget(%s) = %+v, %v; want %+v (error %v)", tt.path, got, err, tt.want, tt.err)
		}
	}
	// An open descriptor of a regular file is written straight to,
	// appending, never replaced.
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := fsx.WriteTarget("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), "session file"); err == nil && !got.Direct {
		t.Errorf("WriteTarget(/proc/self/fd/N of a file) = %+v; want Direct", got)
	}
}
