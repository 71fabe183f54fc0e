package fsx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/sessiontree/sessiontree"
)

// Open opens the regular file at path with flag (os.O_RDONLY,
// os.O_RDWR|os.O_APPEND, ...; not os.O_CREATE) and refuses anything else
// with a [*sessiontree.NotRegularFileError] saying it is not a want
// ("session file", "database file"). Other errors are os.Stat's and
// os.OpenFile's, *fs.PathError.
//
// It looks twice. Before opening, os.Stat refuses what is plainly not a
// regular file without opening it at all: opening a named pipe for
// reading blocks until a writer comes, and opening some devices has
// effects of its own (a tape rewinds, a serial line hangs up). The path
// may be replaced between that look and the open, so the open adds
// O_NONBLOCK, with which opening a named pipe returns at once, and the
// opened file's own Stat is checked again: the file returned is the one
// checked, with no window between check and use. O_NONBLOCK changes
// nothing for a regular file, whose reads and writes never wait.
func Open(path string, flag int, want string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // what the caller asked for; the stat is ours
		}
		return nil, err
	}
	if err := Check(path, fi, want); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = Check(path, fi, want)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Check returns a [*sessiontree.NotRegularFileError] saying path is not
// a want when fi, the file at path, is not a regular file; nil when it
// is.
func Check(path string, fi fs.FileInfo, want string) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &sessiontree.NotRegularFileError{Path: path, Mode: fi.Mode().Type(), Want: want}
}

// Target is where a write to a path goes, as [WriteTarget] finds it.
type Target struct {
	// Path is the file to write. When Direct is false it is the path
	// given with the symbolic links naming it followed: a regular file,
	// or where one is to be made, to be replaced atomically (a new file
	// in its directory renamed over it), so that the link stays a link.
	// When Direct is true it is the path given.
	Path string
	// Direct is true when the path is to be opened and written to as it
	// is, appending, never truncated or replaced: it names a device
	// (/dev/null; /dev/stdout on a terminal or a pipe), a named pipe, a
	// socket, or an open file descriptor (/dev/stdout, /dev/fd/N,
	// /proc/self/fd/N on a file a shell opened with > or >>).
	Direct bool
}

// maxLinks bounds the symbolic links followed by hand, as the kernel
// bounds them (Linux allows 40).
const maxLinks = 40

// WriteTarget tells where a write to path goes (see [Target]). A
// directory is refused with a [*sessiontree.NotRegularFileError] saying
// it is not a want.
func WriteTarget(path, want string) (Target, error) {
	fi, err := os.Stat(path) // follows every link, as an open would
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A missing file, or a link to one: the file is made at the
		// link's target, as a shell's > makes it.
		p, _, err := followLinks(path)
		return Target{Path: p}, err
	case err != nil:
		return Target{}, err
	case fi.IsDir():
		return Target{}, &sessiontree.NotRegularFileError{Path: path, Mode: fi.Mode().Type(), Want: want}
	case !fi.Mode().IsRegular():
		return Target{Path: path, Direct: true}, nil
	}
	p, viaFD, err := followLinks(path)
	if err != nil {
		return Target{}, err
	}
	if viaFD {
		// Opening /proc/self/fd/N opens the file again at offset 0 (on
		// Linux), and renaming over it would throw away what a shell's
		// >> keeps: write straight to it, appending.
		return Target{Path: path, Direct: true}, nil
	}
	if at, err := os.Stat(p); err != nil || !os.SameFile(fi, at) {
		return Target{}, fmt.Errorf("%s: following its links by hand does not reach the file they name", path)
	}
	return Target{Path: p}, nil
}

// followLinks follows the symbolic links that path's last element names,
// one by one, to the path of the file they end at (which may not exist).
// The directories on the way are left as they are: a rename works
// through them. viaFD tells whether one of the paths on the way names an
// open file descriptor (/dev/fd/N, /proc/<pid>/fd/N), whose link text the
// kernel does not follow as a path.
func followLinks(path string) (p string, viaFD bool, err error) {
	p = path
	for range maxLinks {
		viaFD = viaFD || namesDescriptor(p)
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return p, viaFD, nil
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", false, err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(linkDir(p, t), t)
		}
		p = t
	}
	return "", false, &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
}

// linkDir is the folder a relative link text t, read from the link at
// p, starts from. The kernel follows it from the folder that holds the
// link, itself reached through any links on the way: a text that climbs
// ("../x") then leads elsewhere than the path's text, so the folder is
// resolved; one that only descends leads to the same file from the
// folder's path as it is.
func linkDir(p, t string) string {
	dir := filepath.Dir(p)
	if !slices.Contains(strings.Split(filepath.ToSlash(t), "/"), "..") {
		return dir
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// namesDescriptor tells whether p is in a folder of open file
// descriptors.
func namesDescriptor(p string) bool {
	p = filepath.ToSlash(filepath.Clean(p))
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/") && strings.Contains(p, "/fd/")
}

// WriteFile writes what write produces to the file at path, as
// [WriteTarget] says: a regular file (or a new one) atomically, through a
// temporary file in the same directory (mode perm) that is synced, renamed
// over the target and followed by a sync of the directory, so the path
// holds either its old content or all of the new, even after a crash;
// missing directories are made with mode 0700. Anything else (a device, a
// named pipe, an open descriptor) is written straight to, appending. When
// write fails the target is left as it was and the temporary file removed.
func WriteFile(path, want string, perm os.FileMode, write func(w io.Writer) error) (err error) {
	t, err := WriteTarget(path, want)
	if err != nil {
		return err
	}
	if t.Direct {
		return writeDirect(t.Path, write)
	}
	dir := filepath.Dir(t.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(t.Path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if err := os.Rename(tmp, t.Path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// writeDirect writes to path as it is, a device, a pipe or an open
// descriptor: there is nothing to sync or rename.
func writeDirect(path string, write func(w io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	return err
}

// SyncDir makes a rename or a new file in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// Within tells whether path is dir or inside it. It compares names
// only: both are to be in the same form (absolute and clean, and
// resolved alike when links matter).
func Within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
