package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/internal/jsonx"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

func newImportCommand(a *app) *cobra.Command {
	var strict, lenient, asJSON, wait, noWait, follow bool
	cmd := &cobra.Command{
		Use:   "import [PATH...]",
		Short: "Import pi session files or folders into the database",
		Long: `Import pi session files, and every .jsonl file under the folders given
(default: pi's sessions folder, as pi finds it: $PI_CODING_AGENT_SESSION_DIR,
else $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions). Importing is idempotent: an unchanged file is skipped,
a file that has grown since adds only its new lines, and a file whose
imported part changed is reported as a conflict, not merged. One bad file
never stops the others. Paths may be symbolic links (a linked ~/.pi, say): a
file is known by its resolved path, so it is imported once whichever path
reaches it; inside a folder, links leading out of it are not followed. A
named pipe or a device is refused.

By default a torn last line (a write cut short) is left for a later import,
a torn line that pi ended with a newline after a crash is skipped as pi
skips it, and any other damage fails the file; --strict refuses any damage,
--lenient skips bad lines as pi does. Problems are listed with file and line.

Then the search index takes in what was imported, so that searches find it
at once; it holds the first 1 MiB of each entry's text (the entry is stored
whole). A progress bar is drawn on a terminal; otherwise only the summary is
printed, and it is printed whatever happens after the files are done (the
index failing, an interrupt), before the error.

When another process is writing to the database, import says so on stderr
and waits for it (--wait, the default); --no-wait fails at once instead,
with nothing imported. The exit status is 1 when a file failed or
conflicted.

With --watch, import keeps the database current while pi writes: after the
import it follows the folders (subfolders too, and new ones) and imports
each line pi appends within a second, a line left half written once it is
finished, a file pi rewrites whole, and a file moved inside the folders at
its new path; a deleted file leaves its session in the database, and a
folder that does not exist yet is waited for. It prints a line for what it
imports and for problems that last, and stops on Ctrl-C or SIGTERM with a
summary. Started again, it imports only what is new.`,
		Example: `  sessiontree import
  sessiontree import ~/.pi/agent/sessions/--home-me-project--
  sessiontree import --lenient old-session.jsonl --json
  sessiontree import --watch       # follow pi's sessions folder until Ctrl-C`,
		Args: args(0, -1, "any number of paths"),
		RunE: func(cmd *cobra.Command, paths []string) error {
			ctx := cmd.Context()
			opts := store.ImportOptions{}
			switch {
			case strict && lenient:
				return usagef("--strict and --lenient cannot be used together")
			case strict:
				opts.Mode = jsonl.Strict
			case lenient:
				opts.Mode = jsonl.Lenient
			}
			var err error
			if opts.MaxLineBytes, err = a.maxLine(); err != nil {
				return err
			}
			if cmd.Flags().Changed("wait") && cmd.Flags().Changed("no-wait") && wait == noWait {
				return usagef("--wait and --no-wait cannot be used together")
			}
			opts.NoWait = noWait || !wait
			s, err := a.createStore(ctx)
			if err != nil {
				return err
			}
			if follow {
				return watchImport(ctx, a, s, paths, opts, asJSON)
			}
			bar := a.progressBar()
			opts.Progress = func(p store.ImportProgress) {
				bar.Update(view.ProgressStatus{FilesDone: p.FilesDone, FilesTotal: p.FilesTotal,
					BytesDone: p.BytesDone, BytesTotal: p.BytesTotal})
			}
			opts.Waiting = a.waiting(bar)
			report, err := s.Import(ctx, paths, opts)
			if derr := bar.Done(); err == nil {
				err = derr
			}
			summary := importSummary(report)
			if err == nil {
				summary.Indexed, summary.IndexSeconds, err = indexPending(ctx, a, s, opts.NoWait)
			}
			if len(paths) == 0 && len(report.Files) == 0 && !asJSON && err == nil {
				dir, err := store.PiSessionsDir()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(a.stdout, "no pi session files in %s (give files or folders to import)\n", dir)
				return err
			}
			// The report comes first, whatever failed after the files
			// were done: what was imported is imported.
			if len(report.Files) > 0 || err == nil {
				if werr := writeImportSummary(a, summary, asJSON); werr != nil {
					return errors.Join(err, werr)
				}
			}
			if err != nil {
				return err
			}
			if n := summary.Failed; n > 0 {
				return silentError{fmt.Sprintf("%d of %d files could not be imported", n, len(report.Files))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "refuse files with any damage")
	cmd.Flags().BoolVar(&lenient, "lenient", false, "skip damaged lines, as pi does")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON: the counts, and the files that failed, hold unknown entry types or had damage tolerated")
	cmd.Flags().BoolVar(&wait, "wait", true, "wait for another process writing to the database to finish")
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "fail at once when another process is writing to the database")
	cmd.Flags().BoolVar(&follow, "watch", false, "keep importing what pi writes until interrupted")
	return cmd
}

func writeImportSummary(a *app, summary view.ImportSummary, asJSON bool) error {
	if asJSON {
		return view.WriteJSON(a.stdout, summary, a.jsonOpts())
	}
	return view.WriteImportSummary(a.stdout, summary)
}

// waitingMessage is what a command prints on stderr when it waits for
// another process's write.
const waitingMessage = "waiting for another sessiontree process to finish writing…"

// waiting returns what the store calls when it starts waiting for another
// process's write: the message on stderr, on a line of its own (the bar,
// if drawn, is cleared first and redrawn by its next update).
func (a *app) waiting(bar *view.Progress) func() {
	return func() {
		_ = bar.Done()
		fmt.Fprintln(a.stderr, waitingMessage)
	}
}

// indexPending brings the search index up to date with a progress bar (a
// search would read what is pending itself, only so far), and returns how
// many entries it indexed and how long that took. With noWait, a database
// another process is writing to leaves the index as it is, with a note:
// the next search or import takes it up.
func indexPending(ctx context.Context, a *app, s *store.Store, noWait bool) (int64, float64, error) {
	bar := a.progressBar()
	start := time.Now()
	n, err := s.Index(ctx, store.IndexOptions{NoWait: noWait, Waiting: a.waiting(bar), Progress: func(p store.IndexProgress) {
		bar.Update(view.ProgressStatus{Entries: p.Done, EntriesTotal: p.Total})
	}})
	if derr := bar.Done(); err == nil {
		err = derr
	}
	if noWait && errors.Is(err, sessiontree.ErrLocked) {
		fmt.Fprintln(a.stderr, "note: the search index was left behind, another process is writing; the next search or import brings it up to date")
		err = nil
	}
	return n, time.Since(start).Seconds(), err
}

func newForkCommand(a *app) *cobra.Command {
	var at, before string
	var tree bool
	var made newSessionFlags
	cmd := &cobra.Command{
		Use:   "fork SESSION [--at ID | --before ID | --tree] [--id ID] [--cwd DIR] [--json]",
		Short: "Copy part of a session into a new session",
		Long: `Make a new session from a session of the database, linked back to it, and
print the new session's id. By default the active branch is copied up to the
leaf; --at ID copies the path up to that entry (included); --before ID copies
up to just before that user message, to re-edit the prompt as pi does;
--tree copies every branch. Entry ids and labels are kept: a path is copied
as pi's /fork copies it, without its label entries, which follow it instead.
A copied path keeps the latest name on it. The source is not changed.

The new session keeps the source's working directory unless --cwd names
another, and gets a fresh id unless --id asks for one, as with
sessiontree new (pi's rule; an id pi refuses is exit status 2, an id in
use 1). With --json it prints the new session's info, as info --json does.`,
		Example: `  sessiontree fork 0198f2a4
  sessiontree fork 0198f2a4 --before c04e9a55
  sessiontree fork 0198f2a4 --id retry-2 --cwd ~/src/app-retry --json
  new=$(sessiontree fork 0198f2a4 --tree) && sessiontree tree "$new"`,
		Args:              args(1, 1, "one argument (SESSION)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			set := 0
			for _, b := range []bool{at != "", before != "", tree} {
				if b {
					set++
				}
			}
			if set > 1 {
				return usagef("give at most one of --at, --before and --tree")
			}
			if err := made.check(); err != nil {
				return err
			}
			st, err := a.session(ctx, args[0], true)
			if err != nil {
				return err
			}
			opts := store.ForkOptions{Tree: tree, ID: made.id, Cwd: made.cwd}
			if at != "" {
				if opts.At, err = entry(ctx, st, at, false); err != nil {
					return err
				}
			}
			if before != "" {
				if opts.Before, err = entry(ctx, st, before, false); err != nil {
					return err
				}
			}
			meta, err := st.Meta(ctx)
			if err != nil {
				return err
			}
			forked, err := a.store.Fork(ctx, meta.ID, opts)
			return made.report(ctx, a, forked, err)
		},
	}
	cmd.Flags().Var((*nonEmpty)(&at), "at", "copy the path up to this entry, included")
	cmd.Flags().Var((*nonEmpty)(&before), "before", "copy the path up to just before this user message")
	cmd.Flags().BoolVar(&tree, "tree", false, "copy the whole tree")
	made.add(cmd, "the source's")
	return cmd
}

func newGotoCommand(a *app) *cobra.Command {
	var summary string
	cmd := &cobra.Command{
		Use:   "goto SESSION ENTRY [--summary TEXT]",
		Short: "Move the leaf, so the next entry starts a new branch",
		Long: `Move the session's leaf to ENTRY (an id or unique prefix, or "root" for
before the first entry). Nothing is deleted: the next append hangs under
ENTRY and starts a new branch. With --summary, a branch summary of the
branch being left is appended under ENTRY and becomes the leaf, so it is the
first thing the new branch sees.`,
		Example: `  sessiontree goto 0198f2a4 c04e9a55
  sessiontree goto 0198f2a4 c04e9a55 --summary "Tried cursor paging; too complex."
  sessiontree goto 0198f2a4 root`,
		Args:              args(2, 2, "two arguments (SESSION ENTRY)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.session(ctx, args[0], true)
			if err != nil {
				return err
			}
			target, err := entry(ctx, st, args[1], true)
			if err != nil {
				return err
			}
			var bs *sessiontree.BranchSummary
			if cmd.Flags().Changed("summary") {
				bs = &sessiontree.BranchSummary{Summary: summary}
			}
			id, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).MoveTo(ctx, target, bs)
			if err != nil {
				return err
			}
			if id != "" {
				_, err = fmt.Fprintln(a.stdout, id)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&summary, "summary", "", "append a summary of the branch being left; it becomes the leaf (its id is printed)")
	return cmd
}

func newEditCommand(a *app) *cobra.Command {
	var omit bool
	var content, contentJSON string
	cmd := &cobra.Command{
		Use:   "edit SESSION ENTRY (--omit | --content TEXT | --content-json JSON)",
		Short: "Change what the model sees of an entry, without rewriting history",
		Long: `Append a context edit (pi 1.x's context_edit entry) that changes what ENTRY
(an id or unique prefix) contributes to the model's context from now on:
--omit takes it out entirely, --content TEXT replaces its content with TEXT,
--content-json JSON with a JSON string or array of content blocks. Use it to
take a poisoned or private tool output, or a failed attempt, out of what the
model sees. Nothing is rewritten: the entry stays in the log exactly as it
was, tree marks it (omitted) or (edited), and a later edit of the same entry
wins. Only the entry's content changes; its role and other fields stay.
The id of the new context_edit entry is printed.

As pi does, edit refuses, with pi's message and exit status 1: a --content-json
that is not a JSON string or array ("Context edit replacement must be null or
contain string/array content"), a missing entry ("Entry <id> not found"), an
entry off the active branch ("Entry <id> is not on the active branch"; goto
it first), and an entry without editable content ("Entry <id> does not
contribute editable model content": only user, assistant and toolResult
messages and custom messages can be edited). A text replacement of an
assistant message or a tool result is stored as one text block. Edits
count on the branch they are appended to, like any entry. A session file
given by path is read-only: import it to edit it.`,
		Example: `  sessiontree edit 0198f2a4 d86f4b07 --omit
  sessiontree edit 0198f2a4 d86f4b07 --content "[tool output removed: it held a secret]"
  sessiontree edit 0198f2a4 d86f4b07 --content-json '[{"type":"text","text":"(redacted)"}]'`,
		Args:              args(2, 2, "two arguments (SESSION ENTRY)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var repl json.RawMessage
			switch set := cmd.Flags().Changed("content"); {
			case btoi(omit)+btoi(set)+btoi(cmd.Flags().Changed("content-json")) != 1:
				return usagef("give exactly one of --omit, --content and --content-json")
			case set:
				repl = jsonx.AppendString(nil, content)
			case !omit:
				repl = json.RawMessage(contentJSON)
			}
			st, err := a.session(ctx, args[0], true)
			if err != nil {
				return err
			}
			id, err := cli.ParseEntryArg(args[1], false)
			if err != nil {
				return usageError{err}
			}
			target, err := cli.EditTarget(ctx, st, id)
			if err != nil {
				return err
			}
			e, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).EditContext(ctx, target, repl)
			var refused *sessiontree.EditRefusedError
			var missing *sessiontree.EntryNotFoundError
			switch {
			case errors.As(err, &refused):
				return refused // pi's message alone
			case errors.As(err, &missing):
				return missing
			case err != nil:
				return err
			}
			_, err = fmt.Fprintln(a.stdout, e.ID)
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&omit, "omit", false, "take the entry out of the model's context")
	f.StringVar(&content, "content", "", "replace the entry's content with this text")
	f.StringVar(&contentJSON, "content-json", "", "replace the entry's content with this JSON string or array of content blocks")
	return cmd
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newLabelCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "label SESSION ENTRY [TEXT]",
		Short: "Label an entry, or clear its label",
		Long: `Set the label of ENTRY (an id or unique prefix) to TEXT, kept as written (pi
does not trim labels); without TEXT (or with an empty one) the label is
cleared. Labels mark places to come back to; tree shows them in [brackets],
and tree --json gives each label's time (labelTimestamp).`,
		Example: `  sessiontree label 0198f2a4 c04e9a55 "the request"
  sessiontree label 0198f2a4 c04e9a55`,
		Args:              args(2, 3, "two or three arguments (SESSION ENTRY [TEXT])"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.session(ctx, args[0], true)
			if err != nil {
				return err
			}
			target, err := entry(ctx, st, args[1], false)
			if err != nil {
				return err
			}
			text := ""
			if len(args) == 3 {
				text = args[2]
			}
			_, err = sessiontree.NewSession(st, sessiontree.SessionOptions{}).SetLabel(ctx, target, text)
			return err
		},
	}
	return cmd
}

func newNameCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "name SESSION NAME",
		Short: "Name a session (an empty name clears it)",
		Long: `Set the session's name. Line breaks become spaces and surrounding space is
trimmed; an empty NAME clears the name. ls shows names, and --name filters
by them.`,
		Example: `  sessiontree name 0198f2a4 "ls --json flag"
  sessiontree name 0198f2a4 ""`,
		Args:              args(2, 2, "two arguments (SESSION NAME)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.session(ctx, args[0], true)
			if err != nil {
				return err
			}
			_, err = sessiontree.NewSession(st, sessiontree.SessionOptions{}).SetName(ctx, args[1])
			return err
		},
	}
	return cmd
}

func newRmCommand(a *app) *cobra.Command {
	var yes bool
	var opts sessiontree.DeleteOptions
	cmd := &cobra.Command{
		Use:   "rm SESSION...",
		Short: "Delete sessions from the database",
		Long: `Delete sessions, with all their entries, from the database, in one
transaction. Files are never touched: a session imported from a file can be
imported again. On a terminal rm lists the sessions and asks first, unless
--yes. A session another writer holds a live claim on (append --claim) is
not deleted, and neither are the others: rm fails naming the holder, unless
--force.`,
		Example: `  sessiontree rm 0198f2a4
  sessiontree ls --name scratch --limit 0 --json | jq -r '.[].id' | xargs -r sessiontree rm --yes`,
		Args:              args(1, -1, "one or more arguments (SESSION...)"),
		ValidArgsFunction: a.completeSessions(-1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var ids []string
			for _, arg := range args {
				id, err := a.sessionID(ctx, arg, "rm")
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			if !yes && view.IsTerminal(a.stdin) && view.IsTerminal(a.stdout) {
				ok, err := confirm(ctx, a, ids)
				if err != nil || !ok {
					return err
				}
			}
			n, err := a.store.DeleteWith(ctx, opts, ids...)
			if errors.Is(err, sessiontree.ErrLocked) {
				return fmt.Errorf("%w; nothing deleted (--force deletes it anyway)", err)
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "deleted %d session%s\n", n, plural(n))
			return err
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "delete sessions even while another writer holds a claim on them")
	return cmd
}

// confirm lists the sessions and asks on the terminal whether to delete
// them.
func confirm(ctx context.Context, a *app, ids []string) (bool, error) {
	rows := make([]view.SessionRow, 0, len(ids))
	for _, id := range ids {
		in, err := a.store.Info(ctx, id)
		if err != nil {
			return false, err
		}
		rows = append(rows, sessionRow(in))
	}
	if err := view.WriteSessions(a.stdout, rows, now()); err != nil {
		return false, err
	}
	fmt.Fprintf(a.stdout, "Delete %d session%s? [y/N] ", len(ids), plural(len(ids)))
	line, err := bufio.NewReader(a.input(ctx)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	fmt.Fprintln(a.stdout, "nothing deleted")
	return false, nil
}

func newAppendCommand(a *app) *cobra.Command {
	var claim claimFlags
	cmd := &cobra.Command{
		Use:   "append SESSION",
		Short: "Append entries read as JSON lines from stdin",
		Long: `Append the entries given on stdin, one JSON object per line, in pi's entry
shape without id, parentId and timestamp, which the store assigns
({"type":"message","message":{"role":"user","content":"hi"}}). Each entry
goes under the current leaf and becomes the leaf; its id is printed on its
own line as soon as it is committed, so a script knows what is durable.
Several append processes on one session at once make one chain: the
database serializes writers and nothing is lost. An entry of a type this
version does not know (a newer pi's, or a misspelt one) is stored as it
is, as pi keeps it, and a warning on stderr says so once the input ends.

With --claim HOLDER the entries are written under a writer claim: the
command claims the session first and is refused, naming the holder, while
another holder's claim is live; every write and a heartbeat renew it, and
it lapses --claim-ttl after the last of them (or at once with --release).
Writes without --claim are refused too while someone holds a claim.`,
		Example: `  echo '{"type":"message","message":{"role":"user","content":"Run the tests."}}' | sessiontree append 0198f2a4
  echo '{"type":"model_change","provider":"anthropic","modelId":"claude-sonnet-4-5"}' | sessiontree append 0198f2a4`,
		Args:              args(1, 1, "one argument (SESSION)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.session(ctx, args[0], true)
			if err != nil {
				return err
			}
			maxLine, err := a.maxLine()
			if err != nil {
				return err
			}
			st, end, err := claim.claim(ctx, st)
			if err != nil {
				return err
			}
			return end(a.appendDrafts(ctx, st, maxLine))
		},
	}
	claim.add(cmd)
	return cmd
}

// appendDrafts appends the drafts read from stdin to st, printing each
// id once it is committed. Entries of types this version does not know
// are stored like any (a newer pi's), and told once on stderr as import
// tells them, when the input ends or fails: a misspelt type is stored
// for good, and would otherwise go unseen.
func (a *app) appendDrafts(ctx context.Context, st sessiontree.Storage, maxLine int) (err error) {
	var unknown sessiontree.UnknownTypes
	defer func() {
		if msg := unknown.String(); msg != "" {
			err = errors.Join(err, view.WriteWarnings(a.stderr, []view.Warning{{Where: "input", Message: msg}}))
		}
	}()
	for d, err := range cli.ReadDrafts(ctx, a.input(ctx), maxLine) {
		if err != nil {
			return err
		}
		e, err := st.Append(ctx, d, sessiontree.AppendOptions{})
		if err != nil {
			return fmt.Errorf("append %s: %w", d.Type, err)
		}
		unknown.Note(e.Type)
		if _, err := fmt.Fprintln(a.stdout, e.ID); err != nil {
			return err
		}
		if err := a.flush(); err != nil {
			return err
		}
	}
	return nil
}

// flush puts out what was written to stdout. An *os.File is unbuffered:
// what was written is out already. A buffered writer is flushed.
func (a *app) flush() error {
	if f, ok := a.stdout.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}
