//go:build unix

package fsx

import "syscall"

// oNonblock makes opening a named pipe return at once (see Open).
const oNonblock = syscall.O_NONBLOCK
