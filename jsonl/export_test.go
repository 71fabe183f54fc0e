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
