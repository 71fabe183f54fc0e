// Package lines reads lines of bounded length: the JSONL reader's session
// files and the entries `sessiontree append` reads from its input. A
// line longer than the bound is refused as soon as the bound is passed,
// and memory never holds more of it than the bound, so an input without
// newlines (/dev/zero, a binary file) costs at most the bound. It owns
// that bound's rule, and the release of a huge line's memory; what a
// line holds is its callers' to parse.
//
// # Huge lines
//
// A line longer than the read buffer comes in a slice of its own that
// the caller may keep ([Reader.Own]). The memory of a huge one (from
// [HugeLine]) goes back to the operating system as soon as it is
// dropped ([Dropped]), not when the Go heap next shrinks: its consumer
// hands it to SQLite, whose copies live outside the Go heap.
//
// # Concurrency
//
// A [Reader] is not safe for concurrent use.
package lines
