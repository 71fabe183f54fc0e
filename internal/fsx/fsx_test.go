//go:build unix

package fsx_test

import (
	"errors"
	"io"
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

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "out.md")
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink("out.md", link); err != nil {
		t.Fatal(err)
	}
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := fsx.WriteFile(link, "page", 0o644, write("one")); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("render failed")
	if err := fsx.WriteFile(file, "page", 0o644, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return failed
	}); !errors.Is(err, failed) {
		t.Errorf("WriteFile(failing write) = %v; want %v", err, failed)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != "one" {
		t.Errorf("after a failed write the file holds %q, %v; want %q", got, err, "one")
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	names, err := os.ReadDir(dir)
	if err != nil || len(names) != 2 {
		t.Errorf("the directory holds %v, %v; want only out.md and link.md (no temporary file)", names, err)
	}
	if err := fsx.WriteFile(filepath.Join(dir, "sub", "deep.md"), "page", 0o644, write("two")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "sub", "deep.md")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a new file in a new directory: %v, %v; want mode 0644", fi, err)
	}
	if err := fsx.WriteFile(dir, "page", 0o644, write("x")); err == nil {
		t.Errorf("WriteFile(a directory) = nil; want an error")
	}
}

// TestWriteFileThroughLinkedFolder: a link whose text climbs with ".."
// names a file relative to the folder that holds it, as the kernel
// follows it, not to the path it was reached by: here a folder reached
// through a link of its own. A new file is made where the link points,
// both when it exists and when it does not yet; it used to be made
// where the path's text led, outside the folder, the link left dangling.
func TestWriteFileThroughLinkedFolder(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "a", "r")
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("a", "r"), filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "new.md"), filepath.Join(real, "out.md")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "d", "out.md")
	for _, text := range []string{"made", "replaced"} {
		if err := fsx.WriteFile(path, "page", 0o644, func(w io.Writer) error {
			_, err := io.WriteString(w, text)
			return err
		}); err != nil {
			t.Fatalf("WriteFile(%s) = %v", text, err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != text {
			t.Errorf("after WriteFile(%s) the link reads %q, %v; want %q", text, got, err, text)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new.md")); err == nil {
		t.Errorf("a file was made at %s, outside the linked folder", filepath.Join(dir, "new.md"))
	}
}
