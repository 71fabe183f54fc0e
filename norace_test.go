//go:build !race

package sessiontree_test

// raceEnabled: see race_test.go.
const raceEnabled = false
