package view

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// ProgressStatus is how far a long job (an import, or the search index's
// catch-up) has come.
type ProgressStatus struct {
	// FilesDone and FilesTotal count files.
	FilesDone, FilesTotal int
	// BytesDone and BytesTotal count bytes read; the bar of an import
	// fills by them and shows megabytes and megabytes per second.
	BytesDone, BytesTotal int64
	// Entries and EntriesTotal, when EntriesTotal is positive, make the
	// bar one of entries alone (no files or bytes), as the search index's
	// catch-up after an import shows it, with entries per second.
	Entries, EntriesTotal int64
}

// entries reports whether s is a status of entries rather than of files
// and bytes.
func (s ProgressStatus) entries() bool { return s.EntriesTotal > 0 }

// ProgressOptions configure a [Progress]. The zero value draws nothing.
type ProgressOptions struct {
	// Terminal says the writer is a terminal: the bar is drawn and redrawn
	// in place. Without it a Progress writes nothing at all, so piped
	// output holds only what the caller prints (its summary), never
	// escape codes or carriage returns.
	Terminal bool
	// Interval is the least time between two redraws; 0 means 100ms.
	// Updates that come sooner change the bar's numbers but are not
	// drawn until a later one.
	Interval time.Duration
}

// Progress draws a one-line progress bar on a terminal, through
// github.com/schollz/progressbar: files done, the bar, the amount done
// (megabytes, or entries) and its rate, and the time left. The library
// measures a terminal's width itself when the writer is an *os.File and
// fits the bar to it, and times the rate from the first update, which
// callers make before any work is done. Safe for concurrent use; mu
// guards every field below it.
type Progress struct {
	w    io.Writer
	opts ProgressOptions

	mu      sync.Mutex
	bar     *progressbar.ProgressBar // nil before the first update
	entries bool                     // the kind of status bar was made for
	desc    string                   // the description bar shows
	err     error                    // the first error writing the bar
}

// NewProgress returns a progress bar drawing on w.
func NewProgress(w io.Writer, opts ProgressOptions) *Progress {
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	return &Progress{w: w, opts: opts}
}

// Update moves the bar to s, redrawing it at most once per interval.
func (p *Progress) Update(s ProgressStatus) {
	if !p.opts.Terminal {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	total, done, desc := s.BytesTotal, s.BytesDone, fmt.Sprintf("%d/%d files ", s.FilesDone, s.FilesTotal)
	if s.entries() {
		// The library counts them: "(1200/4800, 600 entries/s)".
		total, done, desc = s.EntriesTotal, s.Entries, ""
	}
	// The library refuses a maximum of 0 and a count past the maximum
	// (a file may grow while it is read): both would end the command
	// with an error about a bar, so the numbers are held in range.
	total = max(total, 1)
	done = min(max(done, 0), total)
	switch {
	case p.bar == nil || p.entries != s.entries():
		p.start(s.entries(), total, desc)
	case desc != p.desc:
		// Describe draws (once per file), so only when it changed.
		p.desc = desc
		p.bar.Describe(desc)
	}
	if p.bar.GetMax64() != total {
		p.bar.ChangeMax64(total)
	}
	p.keep(p.bar.Set64(done))
}

// start makes the library's bar for a status of entries or of bytes.
func (p *Progress) start(entries bool, total int64, desc string) {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetTheme(progressbar.ThemeASCII),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(p.opts.Interval),
		// "\r", the line, then erase to its end: a redraw writes no
		// line of spaces, and Done erases the line the same way.
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionShowCount(),
	}
	if entries {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("entries"))
	} else {
		opts = append(opts, progressbar.OptionShowBytes(true))
	}
	p.bar, p.entries, p.desc = progressbar.NewOptions64(total, opts...), entries, desc
	p.bar.StartWithoutRender()
}

// keep records err when it is the first.
func (p *Progress) keep(err error) {
	if err != nil && p.err == nil {
		p.err = err
	}
}

// Done clears the bar's line so the caller's summary (or a message)
// starts on a clean line; a later [Progress.Update] draws the bar again.
// It returns the first error writing the bar met.
func (p *Progress) Done() error {
	if !p.opts.Terminal {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.keep(p.bar.Clear())
	}
	return p.err
}
