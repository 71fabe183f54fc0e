package pgtest

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// waitFactor is how many parallel tests per CPU [WaitingParallel] allows.
const waitFactor = 4

// MainWaiting is [Main] for a test binary whose parallel tests mostly
// wait for the server (round trips, the server's own work): it calls
// [WaitingParallel] first.
func MainWaiting(m *testing.M) int {
	WaitingParallel()
	return Main(m)
}

// WaitingParallel lets waitFactor times as many parallel tests run at
// once as go test's default (-test.parallel, GOMAXPROCS), unless
// -test.parallel was given: for a test binary whose parallel tests
// mostly wait (for a server, a timer, another process). Call it from
// TestMain, before m.Run.
func WaitingParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(waitFactor*runtime.GOMAXPROCS(0)))
	}
}
