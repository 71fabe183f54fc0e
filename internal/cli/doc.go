// Package cli holds the logic behind the sessiontree command that is about
// the command line itself rather than about sessions: where the database
// lives by default, what a SESSION or ENTRY argument names, how `append`
// reads entries from its input, and how a session file is checked. The
// command in cmd/sessiontree only parses flags and wires these to the
// store and to package view. It owns those rules and no storage: the
// file check reads the file through package jsonl, whose load applies
// the root package's tree rules.
//
// # Concurrency
//
// The functions hold no state and are safe for concurrent use.
package cli
