//go:build race

package store_test

// raceEnabled trims the slowest tests under the race detector, which
// makes the pure-Go SQLite many times slower.
const raceEnabled = true
