package main

import (
	"errors"
	"slices"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree/engine"
)

// Some one-shot read commands read the database through a memory map
// (engine.Options.MmapSize): a fresh process then reads each page in
// place instead of copying it in, about half a millisecond of a resume
// of 100,000 entries (issue 17). A mapped page the system cannot read
// (the file cut short by another program, a failing disk) faults instead
// of failing a read, so these commands turn such a fault into an error
// (engine.CatchFaults). They read the database on the main goroutine only,
// where the guard is; commands that read on other goroutines or run
// for long (serve, tail, search's index catch-up, check, import), or
// read much they do not print (mappedCommands), read with system calls,
// as a library user does by default.

// mmapSize is what a mapped command maps: the whole database, up to the
// cap SQLite's build sets.
const mmapSize = 1 << 40

// mappedCommands names the commands that read through a map: those that
// read little or print all they read. A mapped page the command touched
// counts in its resident memory, and SQLite's page cache, which is
// bounded, does not hold it: tree, log and export, which read every entry
// of a branch or a session for a line or a file, stay unmapped (tree of
// a 600 MiB session of inline images: 55 MiB resident mapped, 34 MiB
// not, in the same time).
var mappedCommands = []string{"ls", "info", "branch", "context", "usage"}

// mapReads makes the named subcommands of root read through a map,
// their runs guarded by engine.CatchFaults.
func (a *app) mapReads(root *cobra.Command, names ...string) {
	for _, c := range root.Commands() {
		if slices.Contains(names, c.Name()) {
			a.guard(c)
		}
	}
}

// guard wraps c's run: the store it opens maps the database, and a
// fault reading the map is the run's error.
func (a *app) guard(c *cobra.Command) {
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		a.storeOptions.Engine.MmapSize = mmapSize
		return engine.CatchFaults(func() error { return run(cmd, args) })
	}
}

// faulted tells a run that ended in a fault: its store stopped in the
// middle of a read and is left to the process's exit.
func faulted(err error) bool {
	var fe *engine.FaultError
	return errors.As(err, &fe)
}
