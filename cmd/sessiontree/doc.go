// Command sessiontree imports, browses, queries and edits the session trees
// of LLM coding agents: pi's session files and the database this project
// keeps them in, a SQLite file or a PostgreSQL database, and serves them
// as a web page and an HTTP API. Run `sessiontree help` for the commands.
//
// The command only parses flags and wires: sessions come from package
// store (the database) or package jsonl (a file given by path), output is
// drawn by package view, and argument rules live in internal/cli. What
// it owns is the command line: its commands, flags and help texts, and
// the output those give, held by the golden files in testdata/golden.
package main
