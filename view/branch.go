package view

import (
	"bufio"
	"cmp"
	"fmt"
	"io"

	"github.com/sessiontree/sessiontree"
)

// BranchOptions tune the text branch written by [WriteBranch].
type BranchOptions struct {
	// Labels are the current labels by entry id, shown in brackets.
	Labels map[string]string
	// Leaf is the current leaf, marked "(leaf)".
	Leaf string
	// Width cuts each line to this many terminal columns; 0 means no cut.
	Width int
	// TextWidth caps the summary of each entry; 0 means 72 columns.
	TextWidth int
	// Empty is the line written for no entry; "" means [NoEntries].
	Empty string
}

// NoEntries is what the text outputs of tree, branch and log say of a
// session without entries, as context says [sessiontree.NoMessages].
const NoEntries = "(no entries)"

// onlyLeafMoves is what a tree says of a session whose only entries are
// leaf entries, which it draws only with TreeOptions.All.
const onlyLeafMoves = "(no entries but moves of the leaf, which --all shows)"

// WriteBranch writes a path of entries, root first, one line per entry:
// its time (UTC), short id, leaf mark, label and summary; for none, the
// line opts.Empty.
func WriteBranch(w io.Writer, path []sessiontree.Entry, opts BranchOptions) error {
	if opts.TextWidth <= 0 {
		opts.TextWidth = defaultTextWidth
	}
	bw := bufio.NewWriter(w)
	if len(path) == 0 {
		bw.WriteString(cmp.Or(opts.Empty, NoEntries) + "\n")
	}
	for _, e := range path {
		line := entryTime(e) + "  " + entryLine(e, opts.Labels, nil, opts.Leaf, opts.TextWidth)
		if opts.Width > 0 {
			line = Truncate(line, opts.Width)
		}
		bw.WriteString(line)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write branch: %w", err)
	}
	return nil
}

// entryTime is an entry's timestamp as "2006-01-02 15:04:05" in UTC, or the
// raw text when it does not parse.
func entryTime(e sessiontree.Entry) string {
	t, err := e.Time()
	if err != nil {
		return PadRight(Truncate(OneLine(e.Timestamp), 19), 19)
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}
