package view_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree/view"
)

// eraseLine is what the bar writes to clear its line: erase the line,
// back to its start.
const eraseLine = "\x1b[2K\r"

// fakeTerminal returns a bar drawing on a buffer as on a terminal, with
// every update drawn.
func fakeTerminal() (*view.Progress, *bytes.Buffer) {
	var buf bytes.Buffer
	return view.NewProgress(&buf, view.ProgressOptions{Terminal: true, Interval: time.Nanosecond}), &buf
}

func TestProgressPiped(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := view.NewProgress(&buf, view.ProgressOptions{})
	for i := range 100 {
		p.Update(view.ProgressStatus{FilesDone: i, FilesTotal: 100, BytesDone: int64(i) << 20, BytesTotal: 100 << 20})
	}
	p.Update(view.ProgressStatus{Entries: 10, EntriesTotal: 20})
	if err := p.Done(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("piped progress wrote %q; want nothing", buf.String())
	}
}

func TestProgressFiles(t *testing.T) {
	t.Parallel()
	p, buf := fakeTerminal()
	p.Update(view.ProgressStatus{FilesTotal: 40, BytesTotal: 10_000_000})
	p.Update(view.ProgressStatus{FilesDone: 12, FilesTotal: 40, BytesDone: 3_200_000, BytesTotal: 10_000_000})
	if err := p.Done(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"\r0/40 files ", "\r12/40 files ", "[======>", "3.2/10 MB", eraseLine} {
		if !strings.Contains(out, want) {
			t.Errorf("files progress wrote\n%q\nwant it to contain %q", out, want)
		}
	}
	if !strings.HasSuffix(out, eraseLine) || strings.Contains(out, "\n") {
		t.Errorf("files progress wrote\n%q\nwant one line redrawn in place, erased at the end", out)
	}
}

func TestProgressEntries(t *testing.T) {
	t.Parallel()
	p, buf := fakeTerminal()
	p.Update(view.ProgressStatus{Entries: 0, EntriesTotal: 4_800})
	p.Update(view.ProgressStatus{Entries: 1_200, EntriesTotal: 4_800})
	if err := p.Done(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"25% [=====>", "1200/4800", "entries/"} {
		if !strings.Contains(out, want) {
			t.Errorf("entries progress wrote\n%q\nwant it to contain %q", out, want)
		}
	}
	if strings.Contains(out, "files") || strings.Contains(out, "MB") {
		t.Errorf("entries progress wrote\n%q\nwant no files or bytes", out)
	}
}

// TestProgressRedrawAfterDone: a command clears the bar to print a
// message (waiting for another writer), and the next update draws it
// again below.
func TestProgressRedrawAfterDone(t *testing.T) {
	t.Parallel()
	p, buf := fakeTerminal()
	p.Update(view.ProgressStatus{FilesDone: 1, FilesTotal: 4, BytesDone: 100, BytesTotal: 400})
	if err := p.Done(); err != nil {
		t.Fatal(err)
	}
	cleared := buf.Len()
	p.Update(view.ProgressStatus{FilesDone: 2, FilesTotal: 4, BytesDone: 200, BytesTotal: 400})
	if after := buf.String()[cleared:]; !strings.Contains(after, "2/4 files") {
		t.Errorf("after Done, the update wrote %q; want the bar drawn again", after)
	}
}

// TestProgressOutOfRange: no total (empty files) and more bytes than the
// total (a file grown while read) draw a bar, not an error.
func TestProgressOutOfRange(t *testing.T) {
	t.Parallel()
	p, buf := fakeTerminal()
	p.Update(view.ProgressStatus{FilesDone: 0, FilesTotal: 2})
	p.Update(view.ProgressStatus{FilesDone: 1, FilesTotal: 2, BytesDone: 900, BytesTotal: 500})
	if err := p.Done(); err != nil {
		t.Errorf("Done() = %v; want nil", err)
	}
	if !strings.Contains(buf.String(), "0/2 files") {
		t.Errorf("progress wrote %q; want the bar drawn", buf.String())
	}
}

var errBrokenTerminal = errors.New("broken terminal")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errBrokenTerminal }

func TestProgressWriteError(t *testing.T) {
	t.Parallel()
	p := view.NewProgress(failingWriter{}, view.ProgressOptions{Terminal: true, Interval: time.Nanosecond})
	p.Update(view.ProgressStatus{FilesDone: 1, FilesTotal: 2, BytesDone: 10, BytesTotal: 20})
	if err := p.Done(); !errors.Is(err, errBrokenTerminal) {
		t.Errorf("Done() = %v; want %v", err, errBrokenTerminal)
	}
}

// BenchmarkProgressUpdate is the cost an import pays per progress report
// (after every chunk of a file), most of them inside the redraw interval.
func BenchmarkProgressUpdate(b *testing.B) {
	p := view.NewProgress(io.Discard, view.ProgressOptions{Terminal: true})
	for i := range b.N {
		p.Update(view.ProgressStatus{FilesDone: i / 100, FilesTotal: b.N/100 + 1, BytesDone: int64(i), BytesTotal: int64(b.N)})
	}
}

// BenchmarkProgressDraw is the cost of one redraw of the bar.
func BenchmarkProgressDraw(b *testing.B) {
	p := view.NewProgress(io.Discard, view.ProgressOptions{Terminal: true, Interval: time.Nanosecond})
	for i := range b.N {
		p.Update(view.ProgressStatus{FilesDone: i / 100, FilesTotal: b.N/100 + 1, BytesDone: int64(i), BytesTotal: int64(b.N)})
	}
}
