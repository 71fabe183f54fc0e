// Package childenv gives tests the environment for child processes that
// run the test binary again (multi-process tests, crash loops, the
// command run as a process).
//
// Under the race detector, a program sleeps one second before it exits
// (ThreadSanitizer's atexit_sleep_ms, 1000 by default, which Go keeps),
// to catch races of goroutines still running at exit. A child process
// that is started and ends hundreds of times in a test run, each ending
// checked by its parent, made that second most of the time of the tests
// that start them: a child of the reliability tests took 1.1 s to run
// nothing, 0.1 s without the sleep. The races the sleep is for are still
// caught while the child runs its job.
//
// # Concurrency
//
// [Env] is safe for concurrent use.
package childenv

import (
	"os"
	"strings"
)

// noExitSleep is the GORACE option that turns the sleep at exit off.
const noExitSleep = "atexit_sleep_ms=0"

// Env returns this process's environment with extra variables added
// ("NAME=value"), for a child process: GORACE gets atexit_sleep_ms=0
// added to the options it has, unless it sets atexit_sleep_ms itself.
// Without the race detector GORACE is not read, and changes nothing.
func Env(extra ...string) []string {
	env := os.Environ()
	opts := os.Getenv("GORACE")
	if !strings.Contains(opts, "atexit_sleep_ms=") {
		opts = strings.TrimSpace(opts + " " + noExitSleep)
	}
	out := make([]string, 0, len(env)+len(extra)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GORACE=") {
			out = append(out, kv)
		}
	}
	out = append(out, "GORACE="+opts)
	return append(out, extra...)
}
