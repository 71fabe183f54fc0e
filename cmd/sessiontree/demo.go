package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/demo"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

func newDemoCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Create a small branched sample session and show it",
		Long: `Create a sample session in the database, two branches with a compaction, a
branch summary, labels and a name, then print its tree and what the model
sees at its leaf. It is there so a newcomer sees the model at work on a
machine with no agent history; remove it with sessiontree rm. Its ids are
always the same (session 0198f2a4, entries such as c04e9a55 and d86f4b07),
those the examples of the README and of --help name, so they run on it as
written. A database that holds it already keeps it: it is shown again as
it is.`,
		Example: `  sessiontree demo
  sessiontree --db /tmp/demo.db demo`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := a.createStore(ctx)
			if err != nil {
				return err
			}
			st, err := a.createDemo(ctx, s)
			if err != nil {
				return err
			}
			c, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).Context(ctx, sessiontree.ContextOptions{})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Its tree (sessiontree tree %s):\n\n", st.ID())
			if err := view.WriteTree(ctx, a.stdout, st, view.TreeOptions{Width: a.termWidth()}); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "\nWhat the model sees at the leaf (sessiontree context %s):\n\n", st.ID())
			return view.WriteTranscript(a.stdout, c)
		},
	}
}

// createDemo creates the demo session (demo.SessionID) in s, in the
// current folder, and builds it. A database that holds it already (an
// earlier demo) keeps it as it is: it is opened and shown again, with a
// word saying so.
func (a *app) createDemo(ctx context.Context, s *store.Store) (sessiontree.DatabaseSession, error) {
	cwd, _ := store.AbsCwd(".")
	st, err := s.Create(ctx, store.CreateOptions{ID: demo.SessionID, Cwd: cwd})
	made := !errors.Is(err, sessiontree.ErrConflict)
	if !made {
		st, err = s.OpenSession(ctx, demo.SessionID)
	}
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, st.Close)
	if !made {
		fmt.Fprintf(a.stdout, "%s holds the demo session %s already, made before; shown as it is (remove it with 'sessiontree rm %s' to make it again).\n\n",
			s.Path(), st.ID(), demo.SessionID[:8])
		return st, nil
	}
	if _, err := demo.Build(ctx, st); err != nil {
		return nil, err
	}
	fmt.Fprintf(a.stdout, "Created session %s in %s.\n\n", st.ID(), s.Path())
	return st, nil
}
