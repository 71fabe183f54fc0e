package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/internal/fsx"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

func newExportCommand(a *app) *cobra.Command {
	var out, format string
	var forPi, tree bool
	cmd := &cobra.Command{
		Use:   "export SESSION [-o FILE] [--for-pi] [--format jsonl|md|html [--tree]]",
		Short: "Write a session as a pi JSONL file, or as Markdown or HTML to share",
		Long: `Write a session of the database as a pi session file (JSONL, version 3), to
stdout or, atomically, to FILE. Every entry is written as stored, leaf
entries included, so the file reopens on the same leaf. --for-pi writes what
the released pi agent reads correctly: no leaf entries, and the current
leaf's entry last, so pi resumes where the session is.

--format md writes the session to read or to share, for a pull request or a
repository: its name, directory, models, creation time, token and cost
totals, then the active branch as a transcript (thinking folded, tool calls
and results as code blocks, compactions and branch summaries marked).
Images are written beside FILE in a folder FILE_images (FILE without its
extension) and linked; without -o they are left out with a note. --tree adds
a list of every branch: where it forks off, its labels, an outline.

--format html writes one self-contained page (no script, nothing fetched
from a network; images inline) with the transcript and the whole tree:
following a branch in the tree shows that branch.

Markdown and HTML take SESSION as a session of the database or a pi .jsonl
file; JSONL export needs a session of the database.

A FILE that is a symbolic link is written through: its target is replaced,
the link stays. A device or a pipe (/dev/stdout, /dev/null, a named pipe) is
written straight to, never replaced; so is /dev/stdout on a file a shell
opened with >>, which it appends to.`,
		Example: `  sessiontree export 0198f2a4 > session.jsonl
  sessiontree export 0198f2a4 --for-pi -o ~/.pi/agent/sessions/--home-me-project--/resumed.jsonl
  sessiontree export 0198f2a4 --format md --tree -o docs/session.md
  sessiontree export ~/.pi/agent/sessions/--home-me-project--/2026-03-01T10-00-00-000Z_0198f2a4.jsonl --format html -o session.html`,
		Args:              args(1, 1, "one argument (SESSION)"),
		ValidArgsFunction: a.completeSessions(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := checkExportFlags(format, forPi, tree); err != nil {
				return err
			}
			if format != "jsonl" {
				return a.exportPage(ctx, args[0], format, out, tree)
			}
			id, err := a.sessionID(ctx, args[0], "export")
			if err != nil {
				return err
			}
			opts := store.ExportOptions{ForPi: forPi}
			if out != "" && out != "-" {
				if err := a.checkOutput("-o", out); err != nil {
					return err
				}
				return a.store.ExportFile(ctx, id, out, opts)
			}
			return a.store.Export(ctx, id, a.stdout, opts)
		},
	}
	cmd.Flags().VarP((*nonEmpty)(&out), "output", "o", "write to this file (atomically) instead of stdout")
	cmd.Flags().BoolVar(&forPi, "for-pi", false, "write for the released pi agent: no leaf entries, the leaf's entry last")
	cmd.Flags().StringVar(&format, "format", "jsonl", "jsonl (a pi session file), md (Markdown) or html (one self-contained page)")
	cmd.Flags().BoolVar(&tree, "tree", false, "with --format md, add a list of every branch")
	return cmd
}

// checkExportFlags refuses export flags that do not go together.
func checkExportFlags(format string, forPi, tree bool) error {
	switch {
	case format != "jsonl" && format != "md" && format != "html":
		return usagef("--format must be jsonl, md or html, got %q", format)
	case forPi && format != "jsonl":
		return usagef("--for-pi is for --format jsonl")
	case tree && format != "md":
		return usagef("--tree is for --format md (an HTML page always has the tree)")
	}
	return nil
}

// exportPage writes SESSION (of the database or a file) as Markdown or
// HTML, to stdout or atomically to out; Markdown's images go beside out.
func (a *app) exportPage(ctx context.Context, arg, format, out string, tree bool) error {
	st, err := a.session(ctx, arg, false)
	if err != nil {
		return err
	}
	sh, err := view.LoadShare(ctx, st)
	if err != nil {
		return err
	}
	opts := view.MarkdownOptions{Tree: tree}
	write := func(w io.Writer) error {
		if format == "html" {
			return view.WriteHTML(w, sh)
		}
		return view.WriteMarkdown(w, sh, opts)
	}
	if out == "" || out == "-" {
		return write(a.stdout)
	}
	var read []string
	if cli.IsSessionFile(arg) {
		read = append(read, arg)
	}
	if err := a.checkOutput("-o", out, read...); err != nil {
		return err
	}
	if format == "md" {
		// Images go beside a file, not beside a device or a pipe
		// (/dev/stdout_images): there they are left out, as on stdout.
		if t, err := fsx.WriteTarget(out, "page"); err == nil && !t.Direct {
			dir := strings.TrimSuffix(t.Path, filepath.Ext(t.Path)) + "_images"
			opts.Image = view.ImageFiles(dir, filepath.ToSlash(filepath.Base(dir)))
		}
	}
	if err := fsx.WriteFile(out, "page", 0o644, write); err != nil {
		return fmt.Errorf("export %s: %w", out, err)
	}
	return nil
}
