package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names the file the process writes a Go CPU profile of its
// whole run to (for `go tool pprof`), when set: where a command's time
// goes (bench/README.md, issue 17). It is for diagnosis, not a feature.
const cpuProfileEnv = "SESSIONTREE_CPUPROFILE"

// startProfile starts the CPU profile $SESSIONTREE_CPUPROFILE asks for and
// returns the function that stops and writes it; a profile that cannot
// be made is reported on stderr and the command runs without it.
func startProfile(getenv func(string) string, stderr io.Writer) (stop func()) {
	path := getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "sessiontree: $%s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "sessiontree: $%s: %v\n", cpuProfileEnv, err)
		}
	}
}
