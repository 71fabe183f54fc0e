// Package view presents sessions to people and to scripts: the tree as a
// text graph in the manner of `git log --graph`, as JSON, and as the rows
// the web page draws ([Graph], by the text graph's rules), the active
// branch, a readable transcript of the model's context, a session's info,
// tables, relative times and a progress bar. It is what the sessiontree
// command prints, kept out of the command so it can be tested and reused.
//
// Everything here works on any [sessiontree.Storage]: the memory, JSONL and
// SQLite backends print the same way.
//
// # Output
//
// Text output is for people and may change between versions; JSON output
// (the Write...JSON functions) is for scripts and keeps its shape. JSON is
// written compact, one document followed by a newline, unless
// [JSONOptions.Indent] asks for indentation. Entries are always written
// with their raw JSON, byte for byte as stored.
//
// # Concurrency
//
// The functions hold no state and are safe for concurrent use on distinct
// writers. A [Progress] is safe for concurrent use.
package view
