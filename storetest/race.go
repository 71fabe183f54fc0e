//go:build race

package storetest

// RaceEnabled tells whether the race detector is on: it makes SQLite (C
// translated to Go) many times slower, so the tests of every package
// scale their largest inputs down under it.
const RaceEnabled = true
