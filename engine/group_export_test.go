package engine

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the process has used so far: the benchmarks'
// cpu-ns/op, and BenchmarkGroupOf64's cpu-ns/entry.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// WriteCounts returns how many groups of appends the DB has committed (or
// failed), the requests they took, the nanoseconds their leaders held the
// write connection, and the pages its write connection's commits wrote:
// BenchmarkFleet reports appends per commit, time held and pages per
// entry from them.
func (db *DB) WriteCounts() (groups, requests, held, pages int64) {
	var written int64
	if db.cp != nil {
		written = db.cp.written.Load()
	}
	return db.group.groups.Load(), db.group.requests.Load(), db.group.held.Load(), written
}
