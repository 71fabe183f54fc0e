//go:build race

package sessiontree_test

// raceEnabled: the race detector slows the tests several times; the
// long property tests run fewer cases under it.
const raceEnabled = true
