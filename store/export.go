package store

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/fsx"
	"github.com/sessiontree/sessiontree/internal/jsonx"
	"github.com/sessiontree/sessiontree/jsonl"
)

// ExportOptions configure [Store.Export]. The zero value writes the
// session as it is stored.
type ExportOptions struct {
	// ForPi writes what the released pi agent reads correctly: it knows
	// no leaf entries and resumes a session on its last line. See
	// [Store.Export].
	ForPi bool
}

// Export writes session id (exact) to w as a pi JSONL file of version 3:
// the header {"type":"session","version":3,"id","timestamp","cwd"} (with
// "parentSession" when set), then one entry per line, each exactly as
// stored, but that an entry appended through the API with line breaks
// between its JSON tokens (pretty-printed fields) has each break written
// as a space, as the JSONL backend writes it: a line break would cut the
// entry in two, which pi skips as two bad lines. Everything is read in one snapshot, so a session being written
// meanwhile exports as it was at one instant. An entry whose stored JSON
// does not match its checksum ends the export with a
// *sessiontree.CorruptError naming it (see sessiontree.VerifyChecksum), so
// that damage is not written out as an entry; [Store.ExportFile] then
// leaves its file as it was.
//
// By default every entry is written in append order, leaf entries
// included, so the file reopens (in the JSONL backend, or in a pi that
// knows leaf entries) on the leaf the session has here. For a session
// imported from a version-3 pi file and never moved, that is pi's own
// file again, up to what reading a file normalises: every line ends in
// a newline (a carriage return before it is dropped, a last line without
// one gets one), lines of white space alone are left out, as pi leaves
// them out, white space around an entry's JSON is trimmed, and the
// header is written anew from the session's id, time, cwd and parent
// session, in pi's order (pi writes no other member; another is not
// kept). An entry of a file is never changed. A file of version 1 or 2
// comes back as pi migrates it (package jsonl), and the lines a lenient
// import skipped are not there.
//
// With [ExportOptions.ForPi], leaf entries are left out (unless another
// entry names one as its parent or target, which only imported data can
// do) and the current leaf's entry is written last instead of in its
// place, so that pi, which takes the last line for the leaf, resumes where
// the session is. When the leaf has children (the leaf was moved back to
// an entry and nothing was appended since), or label entries name it,
// those lines come before the line of the entry they refer to: forward
// references. pi indexes a file by id before it links entries, so it
// loads them; this project's JSONL reader does not (it refuses a parent
// that comes after its child, or in lenient mode skips the child), so
// such a file is for pi only. Without children of the leaf the file has
// no forward reference and reads anywhere. Moving the leaf's line also
// moves it past later label and session_info entries; when the leaf is
// itself one of those (rare: the leaf moved onto a label), pi then reads
// that label or name as the latest. What pi takes in file order follows
// the moved line too: its tree's order of siblings stamped in the same
// millisecond, its session list's first message, and the order in which
// it adds up costs (the last digits of a float sum). A session with
// entries whose leaf is null cannot be expressed and is refused with
// [ErrNullLeaf].
func (s *Store) Export(ctx context.Context, id string, w io.Writer, opts ExportOptions) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	err := s.d.View(ctx, func(tx sessiontree.DatabaseTx) error { return export(tx, id, bw, opts) })
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("export %s: %w", id, err)
	}
	return nil
}

// ExportFile exports session id to the file at path (see [Store.Export])
// atomically: it writes a temporary file in the same directory (mode
// 0600), syncs it, renames it over path and syncs the directory, so path
// holds either its old content or the whole export, even after a crash.
// Missing directories are created with mode 0700. A path that is a
// symbolic link is written through: the file it points to is replaced
// (or made), and the link stays. A path that names something other than
// a regular file (a device such as /dev/null, /dev/stdout on a terminal
// or a pipe, a named pipe) is written straight to, never replaced;
// so is an open file descriptor (/dev/stdout, /dev/fd/N) on a file a
// shell opened with > or >>, appending. A directory is refused.
func (s *Store) ExportFile(ctx context.Context, id, path string, opts ExportOptions) error {
	var exportErr error // Export names the session in its errors already
	err := fsx.WriteFile(path, "session file", 0o600, func(w io.Writer) error {
		exportErr = s.Export(ctx, id, w, opts)
		return exportErr
	})
	if err != nil && err != exportErr {
		return fmt.Errorf("export %s: %w", id, err)
	}
	return err
}

func export(tx sessiontree.DatabaseTx, id string, w *bufio.Writer, opts ExportOptions) error {
	head, err := tx.ExportHead(id)
	if err != nil {
		return err
	}
	if opts.ForPi && head.Leaf == "" && head.Entries > 0 {
		return ErrNullLeaf
	}
	if _, err := w.Write(jsonl.HeaderLine(head.Meta)); err != nil {
		return err
	}
	// Leaf entries another entry refers to stay, so that no reference
	// dangles; only imported files can have such.
	var keepLeaf map[string]bool
	if opts.ForPi {
		if keepLeaf, err = tx.ReferencedLeaves(id); err != nil {
			return err
		}
	}
	var last []byte
	err = tx.RawEntries(id, func(e sessiontree.RawEntry) error {
		if opts.ForPi {
			if e.Type == sessiontree.TypeLeaf && !keepLeaf[e.ID] {
				return nil
			}
			if e.ID == head.Leaf {
				last = append([]byte(nil), e.Raw...)
				return nil
			}
		}
		return writeLine(w, e.Raw)
	})
	if err != nil || last == nil {
		return err
	}
	return writeLine(w, last)
}

// writeLine writes raw on one line (jsonx.OneLine: an entry appended
// with line breaks between its tokens is stored as it came) and a
// newline.
func writeLine(w *bufio.Writer, raw []byte) error {
	if _, err := w.Write(jsonx.OneLine(raw)); err != nil {
		return err
	}
	return w.WriteByte('\n')
}
