package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeBytes is the pipe buffer the command asks for when its output is a
// pipe: Linux's default is 64 KiB, so a large output (context --json of
// a session of inline images: 5.5 MB) blocked the command at every 64
// KiB until the reader caught up; with 1 MiB (the default most a user
// may ask for, /proc/sys/fs/pipe-max-size) it blocks a sixteenth as
// often. Resume of that session read through a pipe: 26 -> 22 ms.
const pipeBytes = 1 << 20

// widenPipe enlarges out's pipe buffer when out is a pipe; it keeps the
// buffer as it is when it cannot (not a pipe, over the system's bound).
func widenPipe(out *os.File) {
	if fi, err := out.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	_, _ = unix.FcntlInt(out.Fd(), unix.F_SETPIPE_SZ, pipeBytes)
}
