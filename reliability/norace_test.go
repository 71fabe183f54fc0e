//go:build !race

package reliability_test

// raceEnabled tells whether the race detector is on: it makes SQLite (C
// translated to Go) many times slower, so big inputs are scaled down.
const raceEnabled = false
