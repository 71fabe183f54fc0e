//go:build race

package storetest

// raceEnabled trims the corpus of FixtureFiles under the race detector,
// which makes the pure-Go SQLite many times slower.
const raceEnabled = true
