package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/view"
)

func newTailCommand(a *app) *cobra.Command {
	var last int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tail SESSION [-n N] [--json]",
		Short: "Follow a session live: print each new entry as it is committed",
		Long: `Print each entry appended to the session from now on, as soon as it is
committed, by this machine's processes or any other writer of the database,
until interrupted (Ctrl-C, which exits 0) or the session is deleted (exit
status 1, "the session was deleted"). Every branch is followed: the
entries come in the order they were appended, as sessiontree log shows them.
-n N first prints the last N entries already there.

With --json: each entry on its own line, exactly as stored (JSON lines).`,
		Example: `  sessiontree tail 0198f2a4
  sessiontree tail 0198f2a4 -n 20 --json | jq -r .type`,
		Args:              args(1, 1, "one argument (SESSION)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if last < 0 {
				return usagef("-n must not be negative, got %d", last)
			}
			id, err := a.sessionID(ctx, args[0], "tail")
			if err != nil {
				return err
			}
			s, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			st, err := s.OpenSession(ctx, id)
			if err != nil {
				return err
			}
			defer st.Close()
			stats, err := st.Stats(ctx)
			if err != nil {
				return err
			}
			show := a.tailText
			if asJSON {
				show = a.tailJSON
			}
			err = sessiontree.Follow(ctx, st, max(int64(stats.Entries)-last, 0), show)
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil // interrupted: the way a tail ends
			}
			return err
		},
	}
	f := cmd.Flags()
	f.Int64VarP(&last, "lines", "n", 0, "first print the last N entries")
	f.BoolVar(&asJSON, "json", false, "print each entry as one line of JSON, as stored")
	return cmd
}

// tailText prints an entry as sessiontree log does.
func (a *app) tailText(e sessiontree.Entry) error {
	if err := view.WriteBranch(a.stdout, []sessiontree.Entry{e}, view.BranchOptions{Width: a.termWidth()}); err != nil {
		return err
	}
	return a.flush()
}

// tailJSON prints an entry's JSON as stored, on one line, as UTF-8
// (view.UTF8JSON).
func (a *app) tailJSON(e sessiontree.Entry) error {
	line := view.UTF8JSON(e.Raw)
	if bytes.ContainsAny(line, "\r\n") {
		var b bytes.Buffer
		if err := json.Compact(&b, line); err != nil {
			return err
		}
		line = b.Bytes()
	}
	if _, err := a.stdout.Write(append(line[:len(line):len(line)], '\n')); err != nil {
		return err
	}
	return a.flush()
}
