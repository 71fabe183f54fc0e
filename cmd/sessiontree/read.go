package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

func newLsCommand(a *app) *cobra.Command {
	var opts store.ListOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [--cwd DIR] [--name TEXT] [--limit N]",
		Short: "List sessions, most recently updated first",
		Long: `List the sessions of the database, most recently updated first: short id,
name (or the first user message), working directory, entry and message
counts, and when the session last changed. Without --limit it lists the
` + strconv.Itoa(store.DefaultListLimit) + ` most recently updated, and says on stderr when there are more:
--limit 0 lists them all.

With --json: an array of rows, each {"id", "name" (omitted if none), "cwd",
"createdAt", "updatedAt", "entries", "messages", "firstUserMessage" (omitted
if none), "parentSession", "leaf", "metadata" (each omitted if none),
"messageCount", "firstMessage"}; the last two are pi's session list's: every
message entry counted, and the first user message's text or "(no
messages)".`,
		Example: `  sessiontree ls
  sessiontree ls --cwd . --limit 10
  sessiontree ls --name refactor --json | jq -r '.[].id'`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := checkFilterFlags(opts.Limit, &opts.Cwd); err != nil {
				return err
			}
			s, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			// Without --limit, one more row than the default says whether
			// it cut the list: a script iterating ls --json would
			// otherwise miss the older sessions without a word.
			n := opts.Limit
			cut := !cmd.Flags().Changed("limit") && n > 0
			if cut {
				n++
			}
			sessions, err := s.ListN(ctx, opts, n)
			if err != nil {
				return err
			}
			if cut && len(sessions) > opts.Limit {
				sessions = sessions[:opts.Limit]
				fmt.Fprintf(a.stderr, "note: the %d most recently updated sessions; there are more (--limit 0 lists all)\n", opts.Limit)
			}
			if asJSON {
				return view.WriteJSON(a.stdout, store.ListRows(sessions), a.jsonOpts())
			}
			rows := make([]view.SessionRow, 0, len(sessions))
			for _, in := range sessions {
				rows = append(rows, sessionRow(in))
			}
			return view.WriteSessions(a.stdout, rows, now())
		},
	}
	f := cmd.Flags()
	f.Var((*nonEmpty)(&opts.Cwd), "cwd", "only sessions of this working directory")
	f.Var((*nonEmpty)(&opts.Name), "name", "only sessions whose name contains this text (ASCII case ignored)")
	f.IntVar(&opts.Limit, "limit", store.DefaultListLimit, "show at most this many sessions (0: all)")
	f.BoolVar(&asJSON, "json", false, "print a JSON array of the sessions' list rows")
	return cmd
}

func newInfoCommand(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info SESSION",
		Short: "Show a session's metadata, counts, tokens and cost",
		Long: `Show a session's id, name, working directory, creation and last change,
parent session, metadata (the JSON it was made with, as new --metadata
and POST /api/sessions take it, on one line; only when it has some), leaf,
entry and message counts, branches, compactions,
labels, token and cost totals over every branch, and the cost breakdown per
provider/model (one line each: key, cost, tokens; tool results and summaries
in "Tools/summaries"), as pi's /session shows them.

With --json: an object with id, cwd, name (null if none), leafId (null if
none), entryCount, messageCount and firstMessage (as pi's session list gives
them: every message entry counted, system messages included; the text of
the first user message with text, else "(no messages)"), createdAt,
updatedAt (the last entry's time, or createdAt when that is later, as
for a fork; null if no entry), parentSession (null if
none), metadata (as given, as ls --json shows it; null if none, as for a
pi file), version, branches, roots,
compactions, labels and stats: pi's /session totals {userMessages,
assistantMessages, toolCalls, toolResults, totalMessages, tokens {input,
output, cacheRead, cacheWrite, total}, cost, breakdown [{key, cost,
tokens}]}.`,
		Example: `  sessiontree info 0198f2a4
  sessiontree info session.jsonl --json | jq .stats.cost
  sessiontree info 0198f2a4 --json | jq -r '.stats.breakdown[] | "\(.key) \(.cost)"'`,
		Args:              args(1, 1, "one argument (SESSION)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.session(ctx, args[0], false)
			if err != nil {
				return err
			}
			info, err := view.LoadInfo(ctx, st)
			if err != nil {
				return err
			}
			if asJSON {
				return view.WriteJSON(a.stdout, info, a.jsonOpts())
			}
			return view.WriteInfo(a.stdout, info, now())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	return cmd
}

func newTreeCommand(a *app) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "tree SESSION [--all]",
		Short: "Draw a session's tree of branches",
		Long: `Draw the session as a tree, one line per entry, like git log --graph: short
id, labels in [brackets], and the entry's type or a message's role with its
first words. Entries on the active path (the leaf's ancestors) are drawn "*",
others "o", and the leaf is marked (leaf). At a fork the newest branch keeps
the lane and older ones open lanes to its right. Long runs of plain entries
are folded into one "~" line, and leaf entries (moves of the leaf) are
hidden, unless --all. On a terminal lines are cut to its width; into a pipe
or a file a line shows at most 64 lanes and counts the others ("+N").
A session without entries is drawn as "(no entries)", one whose only
entries are moves of the leaf says so.

An entry that a context edit (see sessiontree edit) changes in what the model
sees at the leaf is marked (omitted) when the model no longer sees it, or
(edited) when its content is replaced. Only the edits in effect at the leaf
count, as pi applies them: per entry, the last edit on the active path after
the compaction boundary, and only if it changes something. An edit on another
branch marks nothing; the context_edit entries themselves are shown as
"context_edit <target> omit" or "... replace: <new text>", and never folded.

With --json: an array of root nodes, each {"entry", "label",
"labelTimestamp", "children"} as pi's getTree gives them: label and
labelTimestamp (the time of the label entry that set the label) omitted when
there is no label; roots in append order, children by timestamp with ties in
append order; leaf entries are left out.`,
		Example: `  sessiontree tree 0198f2a4
  sessiontree tree 0198f2a4 --all | less
  sessiontree tree session.jsonl --json`,
		Args:              args(1, 1, "one argument (SESSION)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.session(ctx, args[0], false)
			if err != nil {
				return err
			}
			if asJSON {
				return view.WriteTreeJSON(ctx, a.stdout, st, a.jsonOpts())
			}
			return view.WriteTree(ctx, a.stdout, st, view.TreeOptions{All: all, Width: a.termWidth()})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "show every entry: fold nothing, show leaf entries")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tree as JSON")
	return cmd
}

func newBranchCommand(a *app) *cobra.Command {
	var from string
	var full, asJSON bool
	cmd := &cobra.Command{
		Use:   "branch SESSION [--from ID] [--full]",
		Short: "Show the active branch (or the path to an entry), root first",
		Long: `Show the entries on the path from the root to the leaf (or to the entry
--from names), one per line with its time, root first. The path starts at the
compaction boundary, as the model's context does, unless --full. A path
without entries says so: "(no entries)" for an empty session, or that the
leaf is before the first entry.

With --json: an array of the entries, each exactly as stored.`,
		Example: `  sessiontree branch 0198f2a4
  sessiontree branch 0198f2a4 --from 3f9a0c12 --full
  sessiontree branch session.jsonl --full --json | jq length`,
		Args:              args(1, 1, "one argument (SESSION)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, start, err := a.sessionAt(ctx, args[0], from)
			if err != nil {
				return err
			}
			path, err := view.LoadBranch(ctx, st, start, full)
			if err != nil {
				return err
			}
			empty := ""
			if len(path) == 0 && !asJSON {
				// The leaf is null: the session is empty, or its leaf
				// was moved before its first entry.
				if some, err := st.Log(ctx, 0, 1); err != nil {
					return err
				} else if len(some) > 0 {
					empty = "(no entries on the branch: the leaf is before the first entry)"
				}
			}
			return a.writeEntries(ctx, st, path, empty, asJSON)
		},
	}
	cmd.Flags().Var((*nonEmpty)(&from), "from", "start at this entry (id or unique prefix) instead of the leaf")
	cmd.Flags().BoolVar(&full, "full", false, "walk to the root, not only to the compaction boundary")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of entries")
	return cmd
}

func newContextCommand(a *app) *cobra.Command {
	var from string
	var asJSON, projection bool
	cmd := &cobra.Command{
		Use:   "context SESSION [--from ID] [--json [--projection]]",
		Short: "Show what the model would see: messages and state",
		Long: `Show the context the model would be sent at the leaf (or at the entry --from
names): the newest compaction's summary and the messages after it, branch
summaries and custom messages, with the thinking level, model and active
tools in effect. Without --json it is a readable transcript.

With --json: {"messages": [...], "thinkingLevel": ..., "model":
{"provider", "modelId"} or null, "activeToolNames": [...] or null}.
--projection adds "projection": where each message comes from, as pi 1.6.0's
buildSessionProjection gives it: one {"sourceId", "messages"} per entry the
context is built from, in order (the newest compaction first, then the kept
entries, then the rest), each with the messages that entry contributes after
context edits ([] for state entries and omitted ones). Its messages, in
order, are "messages".`,
		Example: `  sessiontree context 0198f2a4
  sessiontree context 0198f2a4 --from 3f9a0c12
  sessiontree context session.jsonl --json | jq '.messages | length'
  sessiontree context 0198f2a4 --json --projection | jq -r '.projection[] | "\(.sourceId) \(.messages | length)"'`,
		Args:              args(1, 1, "one argument (SESSION)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if projection && !asJSON {
				return usagef("--projection needs --json")
			}
			st, start, err := a.sessionAt(ctx, args[0], from)
			if err != nil {
				return err
			}
			if asJSON {
				c, err := view.LoadContextJSON(ctx, st, start, projection)
				if err != nil {
					return err
				}
				return view.WriteContextJSON(a.stdout, c, a.jsonOpts())
			}
			s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
			c, err := s.Context(ctx, sessiontree.ContextOptions{From: start})
			if err != nil {
				return err
			}
			return view.WriteTranscript(a.stdout, c)
		},
	}
	cmd.Flags().Var((*nonEmpty)(&from), "from", "build the context at this entry (id or unique prefix) instead of the leaf")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	cmd.Flags().BoolVar(&projection, "projection", false, `with --json, add "projection": each context entry's id with the messages it contributes`)
	return cmd
}

func newSearchCommand(a *app) *cobra.Command {
	var opts store.SearchOptions
	var session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search QUERY [--cwd DIR] [--session SESSION] [--limit N]",
		Short: "Search the text of every session",
		Long: `Search user and assistant messages (text, thinking, tool-call arguments),
tool results, custom messages, compaction and branch summaries and session
names, in English, CJK or any language (substring matching). Hits come best
first, each with its session, entry, who wrote it and a snippet with the
matches in [brackets]; "*" marks a hit on its session's active branch, "o"
one on another branch.

QUERY is FTS5's query language over substrings, on either engine: words
(all must match), "a phrase", OR, NOT, parentheses, NEAR(lock wait), prefix*;
--literal takes it as plain words. A QUERY it cannot read (empty, or a
syntax error) is exit status 2, with what is wrong and where.

Entries written since the last search are indexed first (with a progress
bar on a terminal), so every search sees everything. When another process
is writing to the database the search does not wait: it reads the newest of
those entries itself (up to 1,000 entries or 2 MiB of them), and says on
stderr when it had to leave some unread. The first 1 MiB of each entry's
text is searched.`,
		Example: `  sessiontree search "database lock"
  sessiontree search 'flock OR fcntl' --cwd . --limit 5
  sessiontree search 日本語 --session 0198f2a4 --json`,
		Args: args(1, 1, "one argument (QUERY)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := checkFilterFlags(opts.Limit, &opts.Cwd); err != nil {
				return err
			}
			if session != "" {
				id, err := a.sessionID(ctx, session, "search --session")
				if err != nil {
					return err
				}
				opts.SessionID = id
			}
			s, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			bar := a.progressBar()
			opts.IndexProgress = func(p store.IndexProgress) {
				bar.Update(view.ProgressStatus{Entries: p.Done, EntriesTotal: p.Total})
			}
			res, err := s.Search(ctx, args[0], opts)
			if derr := bar.Done(); err == nil {
				err = derr
			}
			if errors.Is(err, store.ErrBadQuery) {
				return usageError{err} // QUERY is an argument it cannot take
			}
			if err != nil {
				return err
			}
			if err := view.WriteSearchNote(a.stderr, res.Unsearched); err != nil {
				return err
			}
			hits := res.Hits
			if asJSON {
				return view.WriteJSON(a.stdout, res.HitList(), a.jsonOpts())
			}
			// On a terminal the snippet gets the width the other columns
			// leave; in a pipe it is not cut.
			width := 0
			if w := a.termWidth(); w > 0 {
				width = max(w-60, 30)
			}
			return view.WriteHits(a.stdout, hitRows(hits), now(), width)
		},
	}
	f := cmd.Flags()
	f.Var((*nonEmpty)(&opts.Cwd), "cwd", "only sessions of this working directory")
	f.Var((*nonEmpty)(&session), "session", "only this session (id or unique prefix)")
	f.IntVar(&opts.Limit, "limit", store.DefaultSearchLimit, fmt.Sprintf("show at most this many hits (0: %d, at most %d)", store.DefaultSearchLimit, store.MaxSearchLimit))
	f.BoolVar(&opts.Literal, "literal", false, "take QUERY as plain words, not the query language")
	f.BoolVar(&asJSON, "json", false, "print a JSON array of hits")
	return cmd
}

// writeEntries prints entries of st one per line with their time, label
// and leaf mark (empty the line for none, "" for view.NoEntries), or,
// asJSON, as a JSON array of the entries as stored.
func (a *app) writeEntries(ctx context.Context, st sessiontree.Storage, entries []sessiontree.Entry, empty string, asJSON bool) error {
	if asJSON {
		return view.WriteEntriesJSON(a.stdout, entries, a.jsonOpts())
	}
	labels, err := st.Labels(ctx)
	if err != nil {
		return err
	}
	leaf, err := st.Leaf(ctx)
	if err != nil {
		return err
	}
	return view.WriteBranch(a.stdout, entries, view.BranchOptions{Labels: labels, Leaf: leaf, Width: a.termWidth(), Empty: empty})
}

// checkFilterFlags checks --limit and makes --cwd a cwd as pi records it
// (store.AbsCwd), for the commands that list (ls, search).
func checkFilterFlags(limit int, cwd *string) error {
	if limit < 0 {
		return usagef("--limit must not be negative, got %d", limit)
	}
	if *cwd == "" {
		return nil
	}
	abs, err := store.AbsCwd(*cwd)
	if err != nil {
		return fmt.Errorf("--cwd: %w", err)
	}
	*cwd = abs
	return nil
}

// sessionAt opens SESSION for reading and resolves a --from entry ("" when
// not given).
func (a *app) sessionAt(ctx context.Context, session, from string) (sessiontree.Storage, string, error) {
	st, err := a.session(ctx, session, false)
	if err != nil || from == "" {
		return st, "", err
	}
	start, err := entry(ctx, st, from, false)
	return st, start, err
}
