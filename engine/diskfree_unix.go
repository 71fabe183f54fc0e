//go:build linux || darwin || freebsd

package engine

import "syscall"

// statFree returns the room left to this process on the file system
// holding dir. One that reports no blocks at all (a FUSE file system
// that does not implement statfs, procfs) cannot tell: its 0 free would
// make every database on it full (roomCheck).
func statFree(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Blocks == 0 {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
