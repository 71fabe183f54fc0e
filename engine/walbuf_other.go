//go:build !unix

package engine

// The -wal file's writes are gathered on unix systems only (walbuf.go):
// elsewhere the write connections use SQLite's default VFS.
const (
	walVFSName    = ""
	walVFSEnabled = false
)

// registerWALVFS has nothing to register here.
func registerWALVFS() error { return nil }

// walStats is walbuf.go's; nothing is gathered here.
func walStats() (writes, syscalls int64) { return 0, 0 }
