//go:build !race

package storetest

// raceEnabled trims the corpus of FixtureFiles under the race detector.
const raceEnabled = false
