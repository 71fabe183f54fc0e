package engine

import (
	"errors"
	"path/filepath"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sessiontree/sessiontree"
)

// diskFullError is a write refused for want of room: SQLite's SQLITE_FULL
// (the disk, or the size limit of [Options.MaxSize]), or one of its I/O
// errors while the database's file system has no room left (see
// [DB.translate]). It matches sessiontree.ErrDiskFull and
// sessiontree.ErrStorage and keeps SQLite's error in the chain.
type diskFullError struct{ err error }

func (e *diskFullError) Error() string { return "disk full: " + e.err.Error() }

func (e *diskFullError) Unwrap() error { return e.err }

// Is makes errors.Is(err, sessiontree.ErrDiskFull) and
// errors.Is(err, sessiontree.ErrStorage) true.
func (e *diskFullError) Is(target error) bool {
	return target == sessiontree.ErrDiskFull || target == sessiontree.ErrStorage
}

// lowSpace is how little room left on the database's file system makes an
// I/O error of SQLite's a full disk: less than SQLite needs to grow the
// log by a few pages or its shared-memory index by one 32 KiB block.
const lowSpace = 1 << 20

// freeSpace returns the bytes available to this process on the file
// system holding dir; ok is false when it cannot tell. A test seam.
var freeSpace = statFree

// translate is the package's translate with the check only a DB can make:
// SQLite reports some writes that fail on a full disk as I/O errors, not
// SQLITE_FULL (growing the write-ahead log's shared-memory index: "disk
// I/O error (4874)"), so an I/O error while the database's file system
// has almost no room left is a full disk too.
func (db *DB) translate(err error) error {
	err = translate(err)
	if sqliteCode(err) == sqlite3.SQLITE_IOERR && !errors.Is(err, sessiontree.ErrDiskFull) {
		if free, ok := freeSpace(filepath.Dir(db.path)); ok && free < lowSpace {
			return &diskFullError{err}
		}
	}
	return err
}
