//go:build !unix

package engine

// registerWALVFS returns the default VFS: the -wal file's writes are
// gathered on unix systems only (walbuf.go).
func registerWALVFS() (string, error) { return "", nil }

// walStats is walbuf.go's; nothing is gathered here.
func walStats() (writes, syscalls int64) { return 0, 0 }
