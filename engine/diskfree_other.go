//go:build !(linux || darwin || freebsd)

package engine

// statFree cannot tell on this system: only SQLITE_FULL names a full disk.
func statFree(string) (uint64, bool) { return 0, false }
