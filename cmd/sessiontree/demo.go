package main

import (
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
machine with no agent history; remove it with sessiontree rm.`,
		Example: `  sessiontree demo
  sessiontree --db /tmp/demo.db demo`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := a.createStore(ctx)
			if err != nil {
				return err
			}
			cwd, _ := store.AbsCwd(".")
			st, err := s.Create(ctx, store.CreateOptions{Cwd: cwd})
			if err != nil {
				return err
			}
			a.closers = append(a.closers, st.Close)
			sess := sessiontree.NewSession(st, sessiontree.SessionOptions{})
			if _, err := demo.Build(ctx, sess); err != nil {
				return err
			}
			c, err := sess.Context(ctx, sessiontree.ContextOptions{})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Created session %s in %s.\n\n", st.ID(), s.Path())
			fmt.Fprintf(a.stdout, "Its tree (sessiontree tree %s):\n\n", st.ID())
			if err := view.WriteTree(ctx, a.stdout, st, view.TreeOptions{Width: a.termWidth()}); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "\nWhat the model sees at the leaf (sessiontree context %s):\n\n", st.ID())
			return view.WriteTranscript(a.stdout, c)
		},
	}
}
