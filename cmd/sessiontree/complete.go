package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

// completeSessions completes a SESSION argument at the positions given
// (-1: every position) with the ids of the database's most recent
// sessions that the command takes back as they are (completable),
// described by their names, and with file names when the word looks like
// a path.
func (a *app) completeSessions(positions ...int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		at := false
		for _, p := range positions {
			at = at || p == len(args) || p < 0
		}
		if !at {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if cli.IsSessionFile(toComplete) || strings.HasPrefix(toComplete, ".") || strings.HasPrefix(toComplete, "~") {
			return []cobra.Completion{"jsonl"}, cobra.ShellCompDirectiveFilterFileExt
		}
		s, err := a.openStore(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		page, err := s.List(cmd.Context(), store.ListOptions{Limit: store.MaxListLimit})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, in := range page.Sessions {
			if !strings.HasPrefix(in.ID, toComplete) || !completable(in.ID) {
				continue
			}
			title := in.Name
			if title == "" {
				title = in.FirstUserMessage
			}
			out = append(out, cobra.CompletionWithDesc(in.ID, view.Truncate(view.OneLine(title), 60)))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completable reports whether a session id may be offered to the shell:
// the command takes it back as that id (no white space or control
// character, nothing that reads as a file path), and it shows as it is
// ([view.TermText]: no escape sequence, no bidi override). A session file
// may hold any id, and a candidate is listed on the user's terminal and
// inserted on the command line; a tab or line break in one would also
// break the completion protocol's line. A session with another id is
// still named by a prefix of it.
func completable(id string) bool {
	sa, err := cli.ParseSessionArg(id)
	return err == nil && sa.ID == id && view.TermText(id) == id
}
