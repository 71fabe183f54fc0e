//go:build !race

package storetest

// RaceEnabled tells whether the race detector is on (see race.go).
const RaceEnabled = false
