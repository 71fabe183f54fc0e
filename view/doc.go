// Package view presents sessions to people and to scripts: the tree as a
// text graph in the manner of `git log --graph`, as JSON, and as the rows
// the web page draws ([Graph], by the text graph's rules), the active
// branch, a readable transcript of the model's context, a session's info,
// tables, relative times (by go-humanize) and a progress bar (by
// schollz/progressbar); and a session to share, as
// Markdown ([WriteMarkdown]) or as one self-contained HTML page
// ([WriteHTML]). It is what the sessiontree command prints, kept out of
// the command so it can be tested and reused.
//
// Everything here works on any [sessiontree.Storage]: the memory, JSONL,
// SQLite and PostgreSQL backends print the same way.
//
// It owns the output formats (the text graph, the JSON shapes, the
// Markdown and HTML of a shared session) and nothing stored: it reads
// through the Storage interface and the store's answers only.
//
// # Output
//
// Text output is for people and may change between versions; JSON output
// (the Write...JSON functions) is for scripts and keeps its shape. JSON is
// written compact, one document followed by a newline, unless
// [JSONOptions.Indent] asks for indentation. Entries are always written
// with their raw JSON, byte for byte as stored.
//
// # Sharing
//
// [LoadShare] reads a session once; [WriteMarkdown] and [WriteHTML] show
// the same turns (one per entry: a heading, details, a body of text,
// folded thinking, code blocks and images). Markdown shows the active
// branch, and with [MarkdownOptions.Tree] a list of every branch. The
// HTML page holds every entry once, in tree order, each classed with the
// branches it is on; CSS :target rules show one branch at a time, so the
// page needs no script. Its template and style sheet are embedded from
// share/. Session text is escaped for where it goes: html/template in
// the page; in Markdown, backslash escapes in headings, facts and notes,
// fences longer than any backtick run around code, and in prose (which
// stays Markdown) escaped HTML tags and script links.
//
// # Concurrency
//
// The functions hold no state and are safe for concurrent use on distinct
// writers. A [Progress] is safe for concurrent use.
package view
