package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/store"
)

// app is one run of the command: its streams, global flags and what it
// opened (closed by run when the command returns).
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            cli.DBEnv

	dbFlag      string
	maxLineFlag string

	// storeOptions open the store: a mapped command's (fault.go) map it.
	storeOptions store.Options
	store        *store.Store
	closeStore   func() error
	closers      []func() error
}

// errReadOnlyFile explains why a command that writes refuses a file.
var errReadOnlyFile = errors.New("a session file is read straight from disk, read-only; import it to change it")

// session opens the session a SESSION argument names: a file read-only
// through the JSONL backend, or a session of the database by id or
// prefix. forWrite refuses files.
func (a *app) session(ctx context.Context, arg string, forWrite bool) (sessiontree.Storage, error) {
	sa, err := cli.ParseSessionArg(arg)
	if err != nil {
		return nil, usageError{err}
	}
	if sa.File != "" {
		if forWrite {
			return nil, fmt.Errorf("%s: %w", sa.File, errReadOnlyFile)
		}
		maxLine, err := a.maxLine()
		if err != nil {
			return nil, err
		}
		st, err := jsonl.Open(ctx, sa.File, jsonl.Options{ReadOnly: true, MaxLineBytes: maxLine})
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, st.Close)
		return st, nil
	}
	s, err := a.openStore(ctx)
	if err != nil {
		return nil, err
	}
	st, err := s.OpenSession(ctx, sa.ID)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, st.Close)
	return st, nil
}

// sessionID resolves a SESSION argument that must name a session of the
// database to its full id.
func (a *app) sessionID(ctx context.Context, arg, what string) (string, error) {
	id, err := dbSessionArg(arg, what)
	if err != nil {
		return "", err
	}
	s, err := a.openStore(ctx)
	if err != nil {
		return "", err
	}
	return s.Resolve(ctx, id)
}

// dbSessionArg reads a SESSION argument that must name a session of a
// database, an id or a prefix of one, for what (the command, or its
// flag): one that cannot name a session is a usage error, a file is
// refused.
func dbSessionArg(arg, what string) (string, error) {
	sa, err := cli.ParseSessionArg(arg)
	if err != nil {
		return "", usageError{err}
	}
	if sa.File != "" {
		return "", fmt.Errorf("%s works on sessions in the database, not on files: import %s first", what, sa.File)
	}
	return sa.ID, nil
}

// entry resolves an ENTRY argument of st: an id or unique prefix, or
// "root" when allowRoot.
func entry(ctx context.Context, st sessiontree.Storage, arg string, allowRoot bool) (string, error) {
	id, err := cli.ParseEntryArg(arg, allowRoot)
	if err != nil {
		return "", usageError{err}
	}
	return cli.ResolveEntry(ctx, st, id)
}

// checkOutput refuses out, the file a command is to write (named by flag:
// export -o, usage --chart), when it is a file the command reads: the
// database, its -wal, -shm or -journal file, or one of files (a session
// file read), through a link or not. Written atomically, it would be
// replaced, and what it held lost: export ID -o sessions.db left one
// session where the database was. A path that names nothing yet, and a
// PostgreSQL database, pass.
func (a *app) checkOutput(flag, out string, files ...string) error {
	fo, err := os.Stat(out)
	if err != nil {
		return nil // a new file; the write reports any other trouble
	}
	if a.store != nil {
		db := a.store.Path()
		files = append(files, db, db+"-wal", db+"-shm", db+"-journal")
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && os.SameFile(fi, fo) {
			return usagef("%s %s is a file the command reads (%s): writing it would replace it", flag, out, f)
		}
	}
	return nil
}

// maxLine returns the line limit of --max-line or $SESSIONTREE_MAX_LINE,
// 0 for the default.
func (a *app) maxLine() (int, error) {
	n, err := cli.MaxLine(a.maxLineFlag, a.env.Getenv)
	if err != nil {
		return 0, usageError{err}
	}
	return n, nil
}
