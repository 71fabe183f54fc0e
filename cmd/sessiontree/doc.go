// Command sessiontree imports, browses, queries and edits the session trees
// of LLM coding agents: pi's session files and the SQLite database this
// project keeps them in. Run `sessiontree help` for the commands.
//
// The command only parses flags and wires: sessions come from package
// store (the database) or package jsonl (a file given by path), output is
// drawn by package view, and argument rules live in internal/cli.
package main
