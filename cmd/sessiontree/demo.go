package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/demo"
	"github.com/sessiontree/sessiontree/memory"
)

func newDemoCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:     "demo",
		Short:   "Build a small branched sample session and show its context",
		Example: "  sessiontree demo",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := memory.New(sessiontree.SessionMeta{Cwd: "/demo"}, memory.Options{})
			if err != nil {
				return err
			}
			s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
			if _, err := demo.Build(ctx, s); err != nil {
				return err
			}
			c, err := s.Context(ctx, sessiontree.ContextOptions{})
			if err != nil {
				return err
			}
			out, err := json.MarshalIndent(c, "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(stdout, string(out))
			return err
		},
	}
}
