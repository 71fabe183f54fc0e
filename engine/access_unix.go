//go:build unix

package engine

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// canWrite returns nil when this process may write the file or folder at
// path, else why not (a permission error, EROFS). It asks the kernel for
// the effective user, so root's bypass of file modes counts, and a
// read-only file system refuses root too.
func canWrite(path string) error {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS)
}

// canRead is canWrite for reading.
func canRead(path string) error {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.R_OK, unix.AT_EACCESS)
}

// owned reports whether this process's user owns the file, which only
// the owner (or root) may change the mode of.
func owned(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && (int(st.Uid) == os.Geteuid() || os.Geteuid() == 0)
}

// locklessVFS is SQLite's VFS that takes no file locks, for reading a
// database no process has open (see DB.dsn).
const locklessVFS = "unix-none"
