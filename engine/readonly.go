package engine

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// Databases that cannot be written.
//
// A database on a read-only mount, in a folder the user may not write,
// whose file is not writable to the user, or on a file system too full
// for SQLite to make the -shm file (roomCheck) can still be read, and [Open]
// opens it for reading only when SQLite could not write it (writeCheck):
// every write then returns a *ReadOnlyError. Left to itself, SQLite
// fails every statement on such a file in WAL mode, reads included: a
// reader needs the -shm file, which it cannot make in a read-only folder
// ("unable to open database file"), and a connection opened for writing
// in such a folder fails as soon as it needs the -wal file ("attempt to
// write a readonly database"). And where it can make them (a database
// file at 0400 in a writable folder) it gives them the database file's
// mode, 0400, so that once the file is writable again every write fails
// on the -shm file until someone deletes it by hand.
//
// So a read-only open never makes a file (readModeOf). When the -wal and
// -shm files exist, another process may have the database open, writing
// it as another user: it opens with mode=ro, which reads the -shm file,
// or builds the index of the -wal file in memory if it may not write it,
// and takes the locks that keep it consistent with a writer. Without a
// -shm file no process has the database open. When a -wal file holds
// what a process left (it crashed, or the files were copied while it
// ran), SQLite would make the -shm file to read it; the open uses SQLite's
// VFS that takes no locks (unix-none) in exclusive locking mode instead,
// in which SQLite keeps the index of the -wal file in its own memory.
// Without a -wal file, or with an empty one, it opens with immutable=1,
// which reads the database file alone (SQLite would make a -wal file
// otherwise, even for reading, since the file is in WAL mode). immutable=1
// alone would not do for the other cases: it ignores the -wal file, and
// would show the database without its last commits. Caveat: a writer
// that opens the database after that choice is not seen, and a checkpoint
// it runs could be read half done; a process that may write the file is
// rarely beside one that may not.
//
// A writable open gives back the database file's mode to a -wal or -shm
// file it owns but may not write, such as those that SQLite left at 0400
// before; see writeCheck.

// writeCheck returns why SQLite could not write the database at path (fi
// is its file's), nil when it can. A write needs the file, and the -wal
// and -shm files beside it: writable when they exist, made in the folder
// when not. A -wal or -shm file this process owns but may not write gets
// the database file's mode back first.
func writeCheck(path string, fi os.FileInfo) *ReadOnlyError {
	if err := canWrite(path); err != nil {
		return &ReadOnlyError{Path: path, Reason: why(err, "the file is not writable")}
	}
	missing := false
	for _, suffix := range []string{"-wal", "-shm"} {
		side := path + suffix
		sfi, err := os.Stat(side)
		if err != nil {
			missing = true
			continue
		}
		if canWrite(side) == nil {
			continue
		}
		if owned(sfi) {
			_ = os.Chmod(side, fi.Mode().Perm()|0o200)
		}
		if err := canWrite(side); err != nil {
			return &ReadOnlyError{Path: path, Reason: why(err, "its "+suffix+" file is not writable")}
		}
	}
	if missing {
		if err := canWrite(filepath.Dir(path)); err != nil {
			return &ReadOnlyError{Path: path, Reason: why(err, "its folder is not writable")}
		}
	}
	return roomCheck(path)
}

// walIndexRegion is the size of the -shm file's regions (SQLite's
// WALINDEX_PGSZ). A process that has the database open has made the
// first: a shorter -shm file is one no process uses.
const walIndexRegion = 32 << 10

// roomCheck returns why SQLite could not open the database at path on a
// full file system, nil when it can. To read the database, even, SQLite
// makes the -shm file's first region unless a process that has it open
// made it already; on a file system without that room left it fails
// every statement ("disk I/O error"), and leaves a -shm file it could
// not size. So a database closed before the disk filled up opens for
// reading only, through no file of SQLite's, as on a read-only mount:
// reads work, and writes return the *ReadOnlyError, which matches
// sessiontree.ErrDiskFull too.
func roomCheck(path string) *ReadOnlyError {
	if fi, err := os.Stat(path + "-shm"); err == nil && fi.Size() >= walIndexRegion {
		return nil
	}
	if free, ok := freeSpace(filepath.Dir(path)); ok && free < walIndexRegion {
		return &ReadOnlyError{Path: path, Reason: "its file system is full", full: true}
	}
	return nil
}

// why is the reason a write was refused with err: denied, or the
// read-only file system.
func why(err error, denied string) string {
	if errors.Is(err, syscall.EROFS) {
		return "it is on a read-only file system"
	}
	return denied
}

// readMode is how a database that cannot be written is read.
type readMode int

const (
	// readShared: with mode=ro, through the -shm file that exists, with
	// the locks that keep the reader consistent with a writer.
	readShared readMode = iota + 1
	// readLockless: a -wal file and no -shm file: with mode=ro, through
	// SQLite's VFS that takes no locks (unix-none), in exclusive locking
	// mode, which keeps the index of the -wal file in memory.
	readLockless
	// readImmutable: no -wal file, or an empty one without a -shm file:
	// with immutable=1, which reads the database file alone and makes no
	// file beside it.
	readImmutable
)

// readModeOf picks how to read the database at path, which cannot be
// written. A -wal file and a -shm file exist while any process has the
// database open; without a -shm file (or with one shorter than a region,
// see walIndexRegion) nobody has, and without a -wal file
// (or with an empty one) there is nothing beside the database file to
// read.
func readModeOf(path string) readMode {
	wal, err := os.Stat(path + "-wal")
	hasWAL := err == nil && canRead(path+"-wal") == nil
	shm, err := os.Stat(path + "-shm")
	hasSHM := err == nil && shm.Size() >= walIndexRegion && canRead(path+"-shm") == nil
	switch {
	case hasWAL && hasSHM, hasWAL && wal.Size() > 0 && locklessVFS == "":
		return readShared
	case hasWAL && wal.Size() > 0:
		return readLockless
	}
	return readImmutable
}

// ReadOnly returns nil when the database can be written, else the
// *ReadOnlyError saying why [Open] opened it for reading only, which every
// write returns too.
func (db *DB) ReadOnly() error {
	if db.ro == nil {
		return nil
	}
	return db.ro
}
