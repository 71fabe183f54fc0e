package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

// newPushCommands returns push (this database to --to) and pull (--from
// into this database): the same copy, store.Push, in two directions.
func newPushCommands(a *app) []*cobra.Command {
	return []*cobra.Command{
		newTransferCommand(a, "push", "to", "pushed", "Copy sessions from this database to another",
			"  sessiontree push --to postgres://team-db/sessions\n  sessiontree push --to ~/backup.db 0198f2a4 --json"),
		newTransferCommand(a, "pull", "from", "pulled", "Copy sessions from another database into this one",
			"  sessiontree pull --from ~/laptop.db 0198f2a4\n  sessiontree pull --from postgres://team-db/sessions"),
	}
}

// newTransferCommand makes push or pull: dir is the flag naming the other
// database ("to" or "from"); example is its help's examples.
func newTransferCommand(a *app, name, dir, verb, short, example string) *cobra.Command {
	var other string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   name + " --" + dir + " DB [SESSION...]",
		Short: short,
		Long: short + ` (a SQLite file path or a postgres:// URL): every
session, or those named, each an id or a unique prefix in the database it
is copied from. Only the entries the other side lacks are copied, byte for
byte, a batch per transaction, so a second run copies nothing and an
interrupted one continues where it stopped. A session that was written to
on both sides since they last met is a conflict and is left alone, as is a
session another writer holds a claim on. A session deleted at the source
while it runs is skipped ("skipped: deleted at the source during the
` + name + `"): nothing of it is left to copy, which is not a failure. One
deleted and made again there with the same id while it is copied is
another session, never mixed with the first: it is copied as it is now
when this side holds nothing of the first or a prefix of it, and is a
conflict otherwise, as it is when it is made again a fourth time during
one ` + name + `. The exit status is 1 when any other session was not
copied in full.

With --json: one object, {"sessions": [...], "totals": {...}}: a row per
session, {"session", "status" (pushed, up-to-date, conflict, claimed,
failed or skipped; "pushed" for a pull too), "pushed" (the entries it
copied), "reason" (omitted when it was copied in full)}, and the totals
line's counts, {"sessions", "entries" (copied, over every session),
"pushed", "upToDate", "conflict", "claimed", "failed", "skipped"}.`,
		Example: example,
		Args:    args(0, -1, "session ids"),
		RunE: func(cmd *cobra.Command, ids []string) error {
			if other == "" {
				return usagef("%s needs --%s DB", name, dir)
			}
			if err := checkTarget("--"+dir, other); err != nil {
				return err
			}
			// Each is resolved in the database copied from, by the
			// copy; what cannot name a session is refused first.
			for _, id := range ids {
				if _, err := dbSessionArg(id, name); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			// The database copied into is made when it does not exist.
			here, err := a.open(ctx, dir == "from")
			if err != nil {
				return err
			}
			there, closeThere, err := openTarget(ctx, other, store.Options{}, dir == "to")
			if err != nil {
				return err
			}
			from, to := here, there
			if dir == "from" {
				from, to = there, here
			}
			rep, err := transfer(ctx, a, name, from, to, ids)
			err = errors.Join(err, closeThere())
			if len(rep.Results) > 0 || err == nil {
				var werr error
				if asJSON {
					werr = view.WriteJSON(a.stdout, view.NewPushJSON(rep), a.jsonOpts())
				} else {
					werr = view.WritePushReport(a.stdout, verb, rep)
				}
				err = errors.Join(err, werr)
			}
			if err == nil && !rep.OK() {
				return silentError{fmt.Sprintf("%d of %d sessions not %s in full", rep.Unfinished(), len(rep.Results), verb)}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&other, dir, "", "the other database: a SQLite file path or a postgres:// URL")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every session's result and the totals as one JSON object")
	return cmd
}

// transfer runs store.Push with a progress bar of entries on a terminal;
// name ("push" or "pull") is the command, which its messages say.
func transfer(ctx context.Context, a *app, name string, from, to *store.Store, ids []string) (store.PushReport, error) {
	bar := a.progressBar()
	rep, err := store.Push(ctx, from, to, store.PushOptions{Sessions: ids, Verb: name, Progress: func(p store.PushProgress) {
		// Nothing to copy draws no bar (a total of 0 is a bar of files).
		if p.EntriesTotal > 0 {
			bar.Update(view.ProgressStatus{Entries: p.Entries, EntriesTotal: p.EntriesTotal})
		}
	}})
	return rep, errors.Join(err, bar.Done())
}
