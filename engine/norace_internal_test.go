//go:build !race

package engine

// raceEnabled tells whether the race detector is on (see race_internal_test.go).
const raceEnabled = false
