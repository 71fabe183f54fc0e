// Package demo builds a small branched sample session, so a newcomer can
// see the model at work on a fresh machine with no agent history: two
// branches, a compaction, a branch summary, labels and a name.
package demo
