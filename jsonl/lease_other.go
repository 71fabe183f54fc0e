//go:build !linux

package jsonl

import "os"

// holdOpens does nothing: only Linux has file leases, which keep other
// processes from opening a file (see the Linux version). held is false.
func holdOpens(f *os.File) (release func(), held bool) { return func() {}, false }
