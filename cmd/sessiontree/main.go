package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

func main() { os.Exit(runMain()) }

// runMain runs the command line of the process, stopping on SIGINT
// (Ctrl-C) or SIGTERM, and returns the exit status. With
// $SESSIONTREE_CPUPROFILE set, it profiles the run (profile.go).
func runMain() int {
	widenPipe(os.Stdout)
	defer startProfile(os.Getenv, os.Stderr)()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// now is the clock for relative times; a test seam.
var now = time.Now

// openStore opens the database that target names (a file path or a
// URL, see store.ParseTarget) and returns it with the function that
// closes it. It is a test seam: in-process tests share one open store per
// file, as a long-running process would, because a fresh one parses the
// database's schema, sets its connections' pragmas and prepares each
// statement again at its first use, which the race detector makes slow.
var openStore = func(ctx context.Context, target string, opts store.Options) (*store.Store, func() error, error) {
	s, err := store.OpenURL(ctx, target, opts)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks errors in how the command was called (exit status 2).
type usageError struct{ err error }

// Error returns the underlying message.
func (e usageError) Error() string { return e.err.Error() }

// Unwrap returns the underlying error.
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// silentError is a failure already reported on stdout (a check that found
// problems): the command exits 1 after printing msg on stderr.
type silentError struct{ msg string }

// Error returns the message for stderr.
func (e silentError) Error() string { return e.msg }

// run executes the command line and returns the exit status: 0 on
// success, 1 on failure, 2 on bad usage. Errors go to stderr as one line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, env: cli.DBEnv{Getenv: os.Getenv, Home: os.UserHomeDir, GOOS: runtime.GOOS}}
	root := newRootCommand(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if !faulted(err) { // a store that faulted stopped mid-read: left to the exit
		if cerr := a.close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	if err == nil {
		return exitOK
	}
	msg := sentence(err)
	if errors.Is(err, jsonl.ErrLineTooLong) {
		msg += " (raise the limit with --max-line or $" + cli.MaxLineEnv + ")"
	}
	fmt.Fprintln(stderr, "sessiontree: "+msg)
	if isUsage(err) {
		return exitUsage
	}
	return exitFailure
}

// isUsage tells usage errors: ours, and cobra's own for unknown commands
// and flags, which come before any of our code runs.
func isUsage(err error) bool {
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, store.ErrUnknownScheme) {
		return true
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command ") || strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "unknown shorthand flag") || strings.HasPrefix(msg, "required flag")
}

// sentence puts an error on one line.
func sentence(err error) string {
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	// An error may quote a session file (an id, a line): its control
	// characters must not act on the terminal.
	return view.ErrorLine(err.Error())
}

func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "sessiontree",
		Short: "Store, browse and query the conversation trees of coding agents",
		Long: `sessiontree keeps the session trees of LLM coding agents (pi's JSONL session
files) in one database, a SQLite file or PostgreSQL (--db), and shows them:
the tree of every branch, the active branch, what the model sees, full-text
search across sessions.

A SESSION argument is a full session id, a unique prefix of one (as with git
commit hashes), or the path of a .jsonl session file, which is then read
straight from the file, read-only, without importing it.

The exit status is 0 on success, 1 when the command failed (an error on
stderr, or problems a command reports: a check's, an import's failed
files, a push's conflicts), and 2 when it was called wrongly: an unknown
command or flag, a wrong number of arguments, an argument or a flag value
it cannot take (an empty or malformed id, a size or a date it cannot
read). A session or entry that is not there is 1.`,
		Example: `  sessiontree demo                 # a sample session, to see the model at work
  sessiontree import               # import pi's sessions folder
  sessiontree ls                   # the sessions, with the ids the others take
  sessiontree tree 0198f2a4        # a session by a unique prefix of its id
  sessiontree edit 0198f2a4 d86f4b07 --omit  # hide an entry from the model
  sessiontree new --name "scripted run"      # an empty session; prints the id append takes
  sessiontree context ~/.pi/agent/sessions/--home-me-project--/2026-03-01T10-00-00-000Z_0198f2a4.jsonl`,
		// A placeholder: --version prints buildVersion, read only then.
		Version:       "-",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Any argument that is not a command is a usage error; no argument
		// shows the help.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q (see sessiontree help)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.SetVersionTemplate("sessiontree {{buildVersion}}\n")
	root.PersistentFlags().Var((*nonEmpty)(&a.dbFlag), "db", "database: a SQLite file path or a postgres:// URL (default $SESSIONTREE_DB, else sessions.db in the user's data directory)")
	root.PersistentFlags().Var((*sizeFlag)(&a.maxLineFlag), "max-line",
		"longest line to read from a session file or append's input, as 512MiB or bytes (default $"+cli.MaxLineEnv+", else 256MiB)")
	root.AddCommand(
		newImportCommand(a),
		newNewCommand(a),
		newLsCommand(a),
		newInfoCommand(a),
		newTreeCommand(a),
		newBranchCommand(a),
		newContextCommand(a),
		newSearchCommand(a),
		newUsageCommand(a),
		newExportCommand(a),
		newForkCommand(a),
		newGotoCommand(a),
		newEditCommand(a),
		newLabelCommand(a),
		newNameCommand(a),
		newRmCommand(a),
		newAppendCommand(a),
		newCheckCommand(a),
		newDemoCommand(a),
		newServeCommand(a),
		newLogCommand(a),
		newTailCommand(a),
	)
	root.AddCommand(newPushCommands(a)...)
	a.mapReads(root, mappedCommands...)
	refuseUnknownTopics(root)
	// Cobra reports a wrong flag value of a subcommand through the flag
	// error func of that command; set it everywhere.
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	}
	return root
}

// nonEmpty is the value of a string flag that an empty value would
// silently turn off, as a variable that was not set gives: --db "$DB"
// would mean the default database (and a write meant for another would
// go there), --session "$ID" every session, --from "$ENTRY" the leaf,
// -o "$OUT" stdout, --chart "$SVG" no chart, --cors "$ORIGIN" no origin
// allowed. It refuses "" as a usage error naming the flag; left out, the
// flag keeps its default.
type nonEmpty string

// String returns the value.
func (p *nonEmpty) String() string { return string(*p) }

// Set takes a value, refusing "".
func (p *nonEmpty) Set(s string) error {
	if s == "" {
		return errors.New("empty (leave the flag out for its default)")
	}
	*p = nonEmpty(s)
	return nil
}

// Type names the value in the help.
func (p *nonEmpty) Type() string { return "string" }

// sizeFlag is the value of a flag that takes a size, as 512MiB or bytes
// (cli.ParseSize): checked when given, so that a wrong one is a usage
// error of every command, not only of those that come to use it.
type sizeFlag string

// String returns the value.
func (p *sizeFlag) String() string { return string(*p) }

// Set takes a size, refusing anything else ("" too).
func (p *sizeFlag) Set(s string) error {
	if _, err := cli.ParseSize(s); err != nil {
		return err
	}
	*p = sizeFlag(s)
	return nil
}

// Type names the value in the help.
func (p *sizeFlag) Type() string { return "string" }

// refuseUnknownTopics makes cobra's help and completion commands refuse
// an argument that names nothing, as a usage error: left to themselves,
// `help tre` shows the root's help and `completion zsch` its own, both
// with exit status 0, so a script sourcing the latter runs help text.
func refuseUnknownTopics(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Args = func(c *cobra.Command, args []string) error {
				if len(args) == 0 {
					return nil
				}
				if found, _, err := c.Root().Find(args); err != nil || found == c.Root() {
					return usagef("unknown help topic %q (see sessiontree help)", args[0])
				}
				return nil
			}
		case "completion":
			c.Args = func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usagef("unknown shell %q for completion: want bash, fish, powershell or zsh", args[0])
				}
				return nil
			}
			// A command without a run of its own shows its help before
			// any check of its arguments.
			c.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
		}
	}
}

// args returns a validator accepting between min and max arguments (max <
// 0: any number), whose error is a usage error naming what is expected.
func args(min, max int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || max >= 0 && len(args) > max {
			return usagef("%s takes %s, got %d argument%s", cmd.Name(), what, len(args), plural(len(args)))
		}
		return nil
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// progressBar returns a progress bar on stderr, drawn only when stderr is
// a terminal.
func (a *app) progressBar() *view.Progress {
	return view.NewProgress(a.stderr, view.ProgressOptions{Terminal: view.IsTerminal(a.stderr)})
}

// jsonOpts indents JSON for people reading it on a terminal.
func (a *app) jsonOpts() view.JSONOptions {
	return view.JSONOptions{Indent: view.IsTerminal(a.stdout)}
}

// termWidth is the width to cut text lines to: the terminal's, or none
// when output goes to a pipe or a file.
func (a *app) termWidth() int { return view.TerminalWidth(a.stdout) }

// openStore opens the database once per run; it must exist (see
// openTarget).
func (a *app) openStore(ctx context.Context) (*store.Store, error) {
	return a.open(ctx, false)
}

// createStore opens the database once per run, making it when it does not
// exist: for the commands that bring sessions in (import, demo, pull,
// serve).
func (a *app) createStore(ctx context.Context) (*store.Store, error) {
	return a.open(ctx, true)
}

func (a *app) open(ctx context.Context, create bool) (*store.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	path, source := a.dbFlag, "--db"
	if path == "" {
		var err error
		if path, err = cli.DefaultDBPath(a.env); err != nil {
			return nil, err
		}
		source = "$SESSIONTREE_DB"
	}
	if err := checkTarget(source, path); err != nil {
		return nil, err
	}
	s, closeStore, err := openTarget(ctx, path, a.storeOptions, create)
	if err != nil {
		return nil, err
	}
	a.store, a.closeStore = s, closeStore
	return s, nil
}

// checkTarget refuses a database value no engine takes as a wrong command
// line (exit status 2), whatever is wrong with it (an unknown scheme, a
// URL missing a slash), naming where it came from (source: "--db",
// "--to", "$SESSIONTREE_DB").
func checkTarget(source, target string) error {
	if _, err := store.ParseTarget(target); err != nil {
		return usagef("%s: %w", source, err)
	}
	return nil
}

// openTarget opens the database target names (openStore). Unless create,
// a SQLite file that does not exist is refused, not made: a command that
// reads it, or writes into sessions it must already hold, would leave an
// empty database behind a mistyped path and answer as if it held nothing.
// A PostgreSQL database is the server's to have or not.
func openTarget(ctx context.Context, target string, opts store.Options, create bool) (*store.Store, func() error, error) {
	if t, err := store.ParseTarget(target); !create && err == nil && t.Engine == store.EngineSQLite {
		if _, err := os.Stat(t.Location); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &noDatabaseError{t.Location}
		}
	}
	return openStore(ctx, target, opts)
}

// noDatabaseError is a SQLite database that a command needs and that does
// not exist. It matches fs.ErrNotExist.
type noDatabaseError struct{ path string }

// Error names the path and what makes a database.
func (e *noDatabaseError) Error() string {
	return "database " + e.path + " does not exist (import, new, demo and serve make one, as a push or pull into it does)"
}

// Unwrap returns fs.ErrNotExist.
func (e *noDatabaseError) Unwrap() error { return fs.ErrNotExist }

func (a *app) close() error {
	var err error
	for i := len(a.closers) - 1; i >= 0; i-- {
		err = errors.Join(err, a.closers[i]())
	}
	a.closers = nil
	if a.store != nil {
		err = errors.Join(err, a.closeStore())
		a.store, a.closeStore = nil, nil
	}
	return err
}
