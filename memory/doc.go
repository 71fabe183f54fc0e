// Package memory is an in-memory session storage: every entry held in a
// slice with a map from id to position, so append and lookup are O(1) and
// a path walk costs its length.
//
// # What it owns
//
// The entries and their index only. The tree rules are the root
// package's: each entry is checked and followed by a sessiontree.Replayer
// (parents, targets, leaf, labels, name), counted by a sessiontree.Tally,
// and paths are walked by sessiontree.WalkPath.
//
// # Concurrency
//
// A [Storage] is safe for concurrent use; one RWMutex guards its state.
//
// # Embedding
//
// The JSONL backend keeps its index in a memory Storage and writes each
// entry to its file through [Options.OnAppend] before the entry becomes
// visible, so a failed write leaves the index unchanged.
//
// # Entry types
//
// Types are open: an entry of a type the root package does not know is
// stored, indexed and returned like any other, byte for byte, and
// [Storage.UnknownTypes] tells which such types a session holds.
package memory
