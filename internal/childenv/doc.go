// Package childenv gives tests the environment for child processes that
// run the test binary again (multi-process tests, crash loops, the
// command run as a process). It owns one rule: the GORACE setting such
// a child runs with (atexit_sleep_ms=0 added to the parent's, unless it
// sets that option itself).
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
