package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newLogCommand(a *app) *cobra.Command {
	var after, limit int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "log SESSION [--after N] [--limit N]",
		Short: "Show a session's append log: every entry of every branch, in order",
		Long: `Show the entries of the session in the order they were appended, every
branch and every leaf move included, one per line with its time: the log the
tree is built from. --after N starts after the Nth entry, --limit N shows N
entries at most, so --after 100 --limit 100 shows entries 101 to 200.
An empty session is "(no entries)", --after past the last entry "(no
entries after entry N)".

With --json: an array of the entries, each exactly as stored (the API's GET
/api/sessions/{id}/entries?after=N&limit=N answers the same).`,
		Example: `  sessiontree log 0198f2a4
  sessiontree log 0198f2a4 --after 1000 --limit 50 --json | jq -r '.[].type'`,
		Args:              args(1, 1, "one argument (SESSION)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if after < 0 || limit < 0 {
				return usagef("--after and --limit must not be negative")
			}
			st, err := a.session(ctx, args[0], false)
			if err != nil {
				return err
			}
			log, err := st.Log(ctx, after, int(limit))
			if err != nil {
				return err
			}
			empty := ""
			if after > 0 {
				empty = fmt.Sprintf("(no entries after entry %d)", after)
			}
			return a.writeEntries(ctx, st, log, empty, asJSON)
		},
	}
	f := cmd.Flags()
	f.Int64Var(&after, "after", 0, "start after the Nth entry")
	f.Int64Var(&limit, "limit", 0, "show at most N entries (0: all)")
	f.BoolVar(&asJSON, "json", false, "print a JSON array of entries")
	return cmd
}
