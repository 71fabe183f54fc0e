//go:build !unix

package engine

import "os"

// canWrite returns nil when this process may write the file at path, else
// why not, found by opening it for writing (which changes nothing). A
// folder is taken as writable: that cannot be found out without writing
// to it, and SQLite tells when it is not.
func canWrite(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// canRead is canWrite for reading.
func canRead(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// owned reports whether this process may change the file's mode; where
// files have no owner in the Unix sense, the system decides when asked.
func owned(os.FileInfo) bool { return true }

// locklessVFS is empty: a database that cannot be written is read through
// SQLite's read-only mode only (see DB.dsn).
const locklessVFS = ""
