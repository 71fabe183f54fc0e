package view

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Column describes one column of a [Table].
type Column struct {
	// Header is the column's title, printed in capitals.
	Header string
	// Right aligns the column to the right (for numbers).
	Right bool
	// Max caps the column's width in terminal columns; 0 means no cap.
	Max int
	// CutLeft cuts over-long cells at their start rather than their end,
	// so the end of a path stays visible.
	CutLeft bool
}

// Table is a text table with aligned columns separated by two spaces, as
// `docker ps` or `gh pr list` print. Cells are folded onto one line. The
// zero value has no columns; build one with [NewTable]. A Table is not safe
// for concurrent use.
type Table struct {
	cols []Column
	rows [][]string
}

// NewTable returns an empty table with the given columns.
func NewTable(cols ...Column) *Table { return &Table{cols: cols} }

// Add appends a row; missing cells are empty and extra cells are dropped.
func (t *Table) Add(cells ...string) {
	row := make([]string, len(t.cols))
	for i := range row {
		if i < len(cells) {
			row[i] = t.fit(i, OneLine(cells[i]))
		}
	}
	t.rows = append(t.rows, row)
}

func (t *Table) fit(i int, s string) string {
	c := t.cols[i]
	if c.CutLeft {
		return TruncateLeft(s, c.Max)
	}
	return Truncate(s, c.Max)
}

// Len returns the number of rows added.
func (t *Table) Len() int { return len(t.rows) }

// Write writes the header and the rows. The last column is not padded, so
// lines carry no trailing spaces.
func (t *Table) Write(w io.Writer) error {
	widths := make([]int, len(t.cols))
	header := make([]string, len(t.cols))
	for i, c := range t.cols {
		header[i] = strings.ToUpper(c.Header)
		widths[i] = StringWidth(header[i])
	}
	for _, r := range t.rows {
		for i, cell := range r {
			widths[i] = max(widths[i], StringWidth(cell))
		}
	}
	bw := bufio.NewWriter(w)
	for _, r := range append([][]string{header}, t.rows...) {
		var line strings.Builder
		for i, cell := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			switch {
			case t.cols[i].Right:
				line.WriteString(PadLeft(cell, widths[i]))
			case i < len(r)-1:
				line.WriteString(PadRight(cell, widths[i]))
			default:
				line.WriteString(cell)
			}
		}
		bw.WriteString(strings.TrimRight(line.String(), " "))
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// SessionRow is one session as `sessiontree ls` shows it.
type SessionRow struct {
	// ID is the session id; the table shows the shortest prefix, at least
	// 8 characters, that tells the listed sessions apart.
	ID string
	// Name is the session name, "" when it has none.
	Name string
	// FirstMessage is the text of the first user message (pi's list
	// gives "(no messages)" for none), shown when the session has no
	// name.
	FirstMessage string
	// Cwd is the session's working directory.
	Cwd string
	// Entries and Messages are the entry and message counts.
	Entries, Messages int64
	// Updated is when the session last changed.
	Updated time.Time
}

// WriteSessions writes sessions as a table: short id, name (or the first
// user message), cwd, entries, messages and the relative time of the last
// change, measured from now.
func WriteSessions(w io.Writer, rows []SessionRow, now time.Time) error {
	t := NewTable(
		Column{Header: "id"},
		Column{Header: "name", Max: 48},
		Column{Header: "cwd", Max: 40, CutLeft: true},
		Column{Header: "entries", Right: true},
		Column{Header: "messages", Right: true},
		Column{Header: "updated"},
	)
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	n := UniquePrefixLen(ids, 8)
	for _, r := range rows {
		title := r.Name
		if title == "" {
			title = r.FirstMessage
		}
		updated := "-"
		if !r.Updated.IsZero() {
			updated = RelativeTime(r.Updated, now)
		}
		t.Add(r.ID[:min(n, len(r.ID))], title, r.Cwd, Count(r.Entries), Count(r.Messages), updated)
	}
	return t.Write(w)
}

// UniquePrefixLen returns the shortest prefix length, at least minLen, at
// which the distinct ids differ from one another. Session ids made as
// UUID v7 start with a timestamp, so sessions created within a minute
// share their first 8 characters and need more.
func UniquePrefixLen(ids []string, minLen int) int {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	n := minLen
	for i := 1; i < len(sorted); i++ {
		a, b := sorted[i-1], sorted[i]
		common := 0
		for common < len(a) && common < len(b) && a[common] == b[common] {
			common++
		}
		n = max(n, common+1)
	}
	return n
}

// HitRow is one search hit as `sessiontree search` shows it.
type HitRow struct {
	// SessionID and EntryID say where the hit is.
	SessionID, EntryID string
	// From is who wrote it: a message's role, or the entry's type.
	From string
	// Time is the entry's time; zero when unknown.
	Time time.Time
	// Snippet is the matching text with the matches marked.
	Snippet string
	// OnActiveBranch tells whether the entry is on its session's active
	// branch.
	OnActiveBranch bool
}

// WriteSearchNote writes, on one line, that a search left unsearched
// entries not yet in the search index (another process was writing), so
// its hits may be incomplete; nothing when unsearched is 0.
func WriteSearchNote(w io.Writer, unsearched int64) error {
	if unsearched <= 0 {
		return nil
	}
	what := Count(unsearched) + " recent entries"
	if unsearched == 1 {
		what = "1 recent entry"
	}
	_, err := fmt.Fprintf(w, "note: the results may be incomplete: %s not yet in the search index could not be searched (another process is writing; search again when it is done)\n", what)
	return err
}

// WriteHits writes search hits as a table, best first as given: a mark
// ("*" on the session's active branch, "o" off it, as in the tree view),
// the session's id (shortest prefix that tells the listed sessions apart),
// the entry's short id, who wrote it, when, and the snippet cut to
// snippetWidth columns (0: not cut). No hits print "no hits".
func WriteHits(w io.Writer, hits []HitRow, now time.Time, snippetWidth int) error {
	if len(hits) == 0 {
		if _, err := io.WriteString(w, "no hits\n"); err != nil {
			return fmt.Errorf("write hits: %w", err)
		}
		return nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.SessionID
	}
	n := UniquePrefixLen(ids, 8)
	t := NewTable(
		Column{Header: " "},
		Column{Header: "session"},
		Column{Header: "entry"},
		Column{Header: "from", Max: 20},
		Column{Header: "when"},
		Column{Header: "snippet", Max: snippetWidth},
	)
	for _, h := range hits {
		mark := markOther
		if h.OnActiveBranch {
			mark = markActive
		}
		when := "-"
		if !h.Time.IsZero() {
			when = RelativeTime(h.Time, now)
		}
		t.Add(mark, h.SessionID[:min(n, len(h.SessionID))], ShortID(h.EntryID), h.From, when, h.Snippet)
	}
	return t.Write(w)
}
