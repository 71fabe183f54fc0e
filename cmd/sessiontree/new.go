package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

func newNewCommand(a *app) *cobra.Command {
	var opts store.CreateOptions
	var made newSessionFlags
	var metadata string
	cmd := &cobra.Command{
		Use:   "new [--cwd DIR] [--id ID] [--name NAME] [--parent-session ID] [--metadata JSON] [--json]",
		Short: "Create an empty session and print its id",
		Long: `Create a session in the database and print its id, for append and the other
commands to write to it. The session is empty, a header only, as pi makes
one before its first message; with --name its one entry names it (a name
of white space alone, which would name nothing, is refused, exit status
2). The database is made when it does not exist, as import makes it.

--cwd is the working directory the session belongs to (default: the current
one): made absolute and, when it exists here, with its symbolic links
resolved, as pi records it and as ls --cwd looks it up. --id asks for the
session's id (default: a fresh UUID v7); pi 1.6.0's rule holds: letters,
digits, ".", "_" and "-", starting and ending with a letter or digit (and
not ending in .jsonl, which the commands take for a file). An id pi would
refuse is exit status 2, an id the database holds already 1.
--parent-session records the session this one continues, in the header, as
given. --metadata is free-form JSON kept with the session, which info and
ls --json show.

With --json: the session's info, exactly as info --json prints it.`,
		Example: `  sessiontree new
  sessiontree new --cwd ~/src/app --name "nightly triage" --json
  id=$(sessiontree new --name "scripted run") && echo '{"type":"message","message":{"role":"user","content":"Hello"}}' | sessiontree append "$id"`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if made.cwd == "" {
				cwd, err := os.Getwd()
				if err != nil {
					return fmt.Errorf("current directory: %w (give --cwd)", err)
				}
				made.cwd = cwd
			}
			if err := made.check(); err != nil {
				return err
			}
			opts.ID, opts.Cwd = made.id, made.cwd
			if cmd.Flags().Changed("metadata") {
				if !json.Valid([]byte(metadata)) {
					return usagef("--metadata: not valid JSON: %q", metadata)
				}
				opts.Metadata = json.RawMessage(metadata)
			}
			s, err := a.createStore(ctx)
			if err != nil {
				return err
			}
			st, err := s.Create(ctx, opts)
			return made.report(ctx, a, st, err)
		},
	}
	f := cmd.Flags()
	made.add(cmd, "the current directory")
	f.Var((*newName)(&opts.Name), "name", "name the session (not white space alone)")
	f.Var((*nonEmpty)(&opts.ParentSession), "parent-session", "the session this one continues, recorded in its header as given")
	f.StringVar(&metadata, "metadata", "", "free-form JSON kept with the session (info and ls --json show it)")
	return cmd
}

// newName is the value of new's --name: refused empty, as a nonEmpty
// flag is, and refused when it would name nothing (store.CheckNewName:
// white space alone), so that a mistyped name is exit status 2, not an
// unnamed session.
type newName string

// String returns the value.
func (p *newName) String() string { return string(*p) }

// Set takes a name a new session can be given.
func (p *newName) Set(s string) error {
	if err := store.CheckNewName(s); err != nil {
		return err
	}
	return (*nonEmpty)(p).Set(s)
}

// Type names the value in the help.
func (p *newName) Type() string { return "string" }

// newSessionFlags are the flags of the commands that make a session (new,
// fork): the new session's --id and --cwd, and --json for what they
// print.
type newSessionFlags struct {
	id, cwd string
	asJSON  bool
}

// add adds the flags to cmd; cwdDefault says what an absent --cwd means.
func (f *newSessionFlags) add(cmd *cobra.Command, cwdDefault string) {
	fs := cmd.Flags()
	fs.Var((*nonEmpty)(&f.cwd), "cwd", "the new session's working directory (default: "+cwdDefault+")")
	fs.Var((*nonEmpty)(&f.id), "id", "the new session's id (default: a fresh UUID v7)")
	fs.BoolVar(&f.asJSON, "json", false, "print the new session's info as info --json does")
}

// check refuses an --id pi would refuse (a usage error) and makes --cwd
// absolute, its links resolved, as pi records a cwd; absent, both stay "".
func (f *newSessionFlags) check() error {
	if err := sessiontree.CheckNewSessionID(f.id); err != nil {
		return usagef("--id: %w", err)
	}
	if f.cwd == "" {
		return nil
	}
	cwd, err := store.AbsCwd(f.cwd)
	if err != nil {
		return fmt.Errorf("--cwd: %w", err)
	}
	f.cwd = cwd
	return nil
}

// report prints the session a command made, st (err its error): its id,
// or with --json its info, as info --json prints it. An id in use says
// what to do; a header the engines refuse (sessiontree.CheckSessionMeta:
// a --cwd or --parent-session that is not UTF-8) is a usage error, its
// fields being the command line's.
func (f *newSessionFlags) report(ctx context.Context, a *app, st sessiontree.DatabaseSession, err error) error {
	var bad *sessiontree.InvalidSessionMetaError
	switch {
	case errors.Is(err, sessiontree.ErrConflict) && f.id != "":
		return fmt.Errorf("%w (choose another --id, or leave it out for a fresh one)", err)
	case errors.As(err, &bad):
		return usageError{err}
	}
	if err != nil {
		return err
	}
	a.closers = append(a.closers, st.Close)
	if !f.asJSON {
		_, err = fmt.Fprintln(a.stdout, st.ID())
		return err
	}
	info, err := view.LoadInfo(ctx, st)
	if err != nil {
		return err
	}
	return view.WriteJSON(a.stdout, info, a.jsonOpts())
}
