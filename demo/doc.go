// Package demo builds a small branched sample session, so a newcomer can
// see the model at work on a fresh machine with no agent history: two
// branches, a compaction, a branch summary, labels and a name.
//
// It owns that sample conversation (its entries and their fixed ids, in
// demo.go, and the id of the session the demo creates, [SessionID]) and
// nothing stored: [Build] appends it to any session, of any backend, and
// `sessiontree demo` is what writes it to a database.
package demo
