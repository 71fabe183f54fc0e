package view

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// IsTerminal reports whether f, a reader or a writer, is a terminal: an
// *os.File on a tty.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// TerminalWidth returns the width of the terminal w is, or 0 when w is not
// a terminal.
func TerminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}

// ProgressStatus is how far a long job (an import) has come.
type ProgressStatus struct {
	// FilesDone and FilesTotal count files.
	FilesDone, FilesTotal int
	// BytesDone and BytesTotal count bytes read.
	BytesDone, BytesTotal int64
	// Entries counts entries processed so far; negative means unknown, and
	// the bar shows megabytes per second instead of entries per second.
	Entries int64
	// EntriesTotal, when positive, makes the bar one of entries alone (no
	// files or bytes), as the search index's catch-up after an import
	// shows it: "[====>   ] 1,200/5,000 entries  4,000 entries/s".
	EntriesTotal int64
}

// ProgressOptions configure a [Progress]. The zero value draws nothing.
type ProgressOptions struct {
	// Terminal says the writer is a terminal: the bar is drawn and redrawn
	// in place. Without it a Progress writes nothing at all, so piped
	// output holds only what the caller prints (its summary), never
	// escape codes or carriage returns.
	Terminal bool
	// Width is the terminal width; 0 means 80.
	Width int
	// Interval is the least time between two redraws; 0 means 100ms.
	Interval time.Duration
	// Now is the clock; nil means time.Now. A test seam.
	Now func() time.Time
}

// Progress draws a one-line progress bar on a terminal: files, megabytes
// and entries per second. Safe for concurrent use; mu guards every field
// below it.
type Progress struct {
	w    io.Writer
	opts ProgressOptions

	mu    sync.Mutex
	start time.Time
	last  time.Time
	drawn bool
	err   error
}

// NewProgress returns a progress bar drawing on w.
func NewProgress(w io.Writer, opts ProgressOptions) *Progress {
	if opts.Width <= 0 {
		opts.Width = 80
	}
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Progress{w: w, opts: opts, start: opts.Now()}
}

// Update redraws the bar with s, at most once per interval: updates that
// come sooner are dropped.
func (p *Progress) Update(s ProgressStatus) {
	if !p.opts.Terminal {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.opts.Now()
	if p.drawn && now.Sub(p.last) < p.opts.Interval {
		return
	}
	p.draw(s, now)
}

func (p *Progress) draw(s ProgressStatus, now time.Time) {
	p.last, p.drawn = now, true
	line := Truncate(p.line(s, now.Sub(p.start)), p.opts.Width-1)
	if _, err := io.WriteString(p.w, "\r"+line+"\x1b[K"); err != nil && p.err == nil {
		p.err = err
	}
}

// line is the text of the bar: "[=====>     ] 12/40 files  3.2/10.0 MB  45,000 entries/s".
func (p *Progress) line(s ProgressStatus, elapsed time.Duration) string {
	frac := 0.0
	switch {
	case s.EntriesTotal > 0:
		frac = float64(s.Entries) / float64(s.EntriesTotal)
	case s.BytesTotal > 0:
		frac = float64(s.BytesDone) / float64(s.BytesTotal)
	case s.FilesTotal > 0:
		frac = float64(s.FilesDone) / float64(s.FilesTotal)
	}
	frac = min(max(frac, 0), 1)
	const barWidth = 24
	filled := int(frac * barWidth)
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	secs := elapsed.Seconds()
	rate := "- entries/s"
	switch {
	case s.Entries < 0 && secs > 0:
		rate = fmt.Sprintf("%.1f MB/s", mb(s.BytesDone)/secs)
	case s.Entries < 0:
		rate = "- MB/s"
	case secs > 0:
		rate = Count(int64(float64(s.Entries)/secs)) + " entries/s"
	}
	if s.EntriesTotal > 0 {
		return fmt.Sprintf("[%s] %s/%s entries  %s", bar, Count(s.Entries), Count(s.EntriesTotal), rate)
	}
	return fmt.Sprintf("[%s] %d/%d files  %.1f/%.1f MB  %s",
		bar, s.FilesDone, s.FilesTotal, mb(s.BytesDone), mb(s.BytesTotal), rate)
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// Done clears the bar's line so the caller's summary starts on a clean
// line. It returns the first
// error writing the bar met.
func (p *Progress) Done() error {
	if !p.opts.Terminal {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		if _, err := io.WriteString(p.w, "\r\x1b[K"); err != nil && p.err == nil {
			p.err = err
		}
	}
	p.drawn = false
	return p.err
}
