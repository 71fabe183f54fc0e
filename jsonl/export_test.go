package jsonl

import "os"

// SetAfterSizeCheck makes fn run between the size check and the cut of
// every cut, until the returned function restores the seam.
func SetAfterSizeCheck(fn func()) (restore func()) {
	afterSizeCheck = fn
	return func() { afterSizeCheck = nil }
}

// SetAfterRewrite makes fn run in every Upgrade once the new file is
// written, before the old one is checked again and replaced, until the
// returned function restores the seam.
func SetAfterRewrite(fn func()) (restore func()) {
	afterRewrite = fn
	return func() { afterRewrite = nil }
}

// Leases tells whether this system gives a lease on f (which nothing
// else may have open).
func Leases(f *os.File) bool {
	release, held := holdOpens(f)
	release()
	return held
}

// FileFaults replace the storage's calls that write, sync and cut its
// files; a nil one is the operating system's.
type FileFaults struct {
	Write    func(f *os.File, b []byte) (int, error)
	Sync     func(f *os.File) error
	Truncate func(f *os.File, size int64) error
}

// SetFileFaults makes the storage write, sync and cut its files through
// ff until the returned function restores the seam.
func SetFileFaults(ff FileFaults) (restore func()) {
	saved := fileIO
	if ff.Write != nil {
		fileIO.write = ff.Write
	}
	if ff.Sync != nil {
		fileIO.sync = ff.Sync
	}
	if ff.Truncate != nil {
		fileIO.truncate = ff.Truncate
	}
	return func() { fileIO = saved }
}
