package pgtest

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// waitFactor is how many parallel tests per CPU [MainWaiting] and
// [RunWaiting] allow.
const waitFactor = 4

// MainWaiting is [Main] for a test binary whose parallel tests mostly
// wait for the server (round trips, the server's own work): it lets
// waitFactor times as many of them run at once as go test's default
// (-test.parallel, GOMAXPROCS), unless -test.parallel was given.
func MainWaiting(m *testing.M) int {
	waitingParallel()
	return Main(m)
}

// RunWaiting is m.Run, with as many parallel tests at once as
// [MainWaiting] allows, for a test binary that needs no server of its
// own but whose parallel tests mostly wait (for timers, other processes).
// Call it from TestMain: os.Exit(pgtest.RunWaiting(m)).
func RunWaiting(m *testing.M) int {
	waitingParallel()
	return m.Run()
}

func waitingParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(waitFactor*runtime.GOMAXPROCS(0)))
	}
}
