//go:build race

package engine

// raceEnabled is storetest.RaceEnabled for the engine's internal tests,
// which cannot import storetest (it imports the engine through store).
const raceEnabled = true
