package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestOpenOnFullDisk opens a database closed before its file system
// filled up (freeSpace says less than the -shm file's first region is
// left): it opens for reading only, making no file beside it, and a write
// returns a *ReadOnlyError that matches sessiontree.ErrDiskFull too. A
// -shm file of a region or more (a process has the database open) needs
// no room, and the open is the usual one. TestFullDiskReads
// (reliability) runs the command on a real full disk.
func TestOpenOnFullDisk(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openPath(t, path)
	if _, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/full"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	free := uint64(walIndexRegion - 1)
	defer func(f func(string) (uint64, bool)) { freeSpace = f }(freeSpace)
	freeSpace = func(string) (uint64, bool) { return free, true }

	db = openPath(t, path)
	if err := db.ReadOnly(); !errors.Is(err, sessiontree.ErrDiskFull) || !errors.Is(err, sessiontree.ErrReadOnly) {
		t.Errorf("ReadOnly() on a full disk = %v; want ErrDiskFull and ErrReadOnly", err)
	}
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + side); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s file after opening on a full disk: %v; want none", side, err)
		}
	}
	if err := db.Check(ctx, ""); err != nil {
		t.Errorf("Check() on a full disk = %v", err)
	}
	_, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/more"})
	var ro *ReadOnlyError
	if !errors.As(err, &ro) || !errors.Is(err, sessiontree.ErrDiskFull) {
		t.Errorf("CreateSession() on a full disk = %v; want a *ReadOnlyError matching ErrDiskFull", err)
	}
	db.Close()

	free = walIndexRegion
	db = openPath(t, path)
	if err := db.ReadOnly(); err != nil {
		t.Errorf("ReadOnly() with a region's room = %v; want nil", err)
	}
	free = 0
	other := openPath(t, path) // the -shm file db made is there
	if err := other.ReadOnly(); err != nil {
		t.Errorf("ReadOnly() on a full disk, the database open = %v; want nil", err)
	}
}

// TestStatFreeCannotTell: a file system that reports no blocks at all
// (procfs here; a FUSE file system that does not implement statfs) says
// nothing of its room, rather than that none is left, which would open
// every database on it read-only (roomCheck). A real one tells.
func TestStatFreeCannotTell(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no procfs here")
	}
	if free, ok := statFree("/proc"); ok {
		t.Errorf("statFree(/proc) = %d, true; want it unable to tell", free)
	}
	if _, ok := statFree(t.TempDir()); !ok {
		t.Errorf("statFree of a temporary folder cannot tell; want its room")
	}
}
