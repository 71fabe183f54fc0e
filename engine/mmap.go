package engine

import (
	"fmt"
	"runtime/debug"

	"github.com/sessiontree/sessiontree"
)

// FaultError is a memory fault reading a database page mapped into memory
// (Options.MmapSize): the file was cut short beneath the reader, or the
// disk failed. It matches sessiontree.ErrStorage. The connection that
// faulted stopped in the middle of a read and must not be used again:
// leave the DB unclosed and end the process, or at least stop using the
// DB.
type FaultError struct {
	// Addr is the address that faulted.
	Addr uintptr
}

// Error says what happened and what to check.
func (e *FaultError) Error() string {
	return fmt.Sprintf("reading the database failed: a page mapped from its file could not be read (fault at %#x); was the file cut short, or is the disk failing?", e.Addr)
}

// Unwrap returns sessiontree.ErrStorage.
func (e *FaultError) Unwrap() error { return sessiontree.ErrStorage }

// CatchFaults runs fn, which reads a DB opened with Options.MmapSize, on
// the calling goroutine with memory faults turned into panics
// (debug.SetPanicOnFault), and returns a fault on mapped memory as a
// *FaultError instead of crashing. A fault near address zero is a nil
// dereference, a bug, and goes on panicking.
func CatchFaults(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(interface{ Addr() uintptr })
		if !ok || f.Addr() < 1<<16 {
			panic(r)
		}
		err = &FaultError{Addr: f.Addr()}
	}()
	return fn()
}
