package lines_test

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/internal/lines"
)

func TestReader(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		size, max int
		want      []string
		tooLong   bool // the read after want ends in ErrTooLong
	}{
		{"lines", "a\nbb\n\nccc", 16, 8, []string{"a\n", "bb\n", "\n", "ccc"}, false},
		{"at the limit", "abcd\nabcd", 16, 4, []string{"abcd\n", "abcd"}, false},
		{"over the limit", "abcd\nabcde\nx\n", 16, 4, []string{"abcd\n"}, true},
		{"last line over the limit", "abcde", 16, 4, nil, true},
		{"longer than the buffer", strings.Repeat("x", 100) + "\ny\n", 16, 100, []string{strings.Repeat("x", 100) + "\n", "y\n"}, false},
		{"longer than the buffer and the limit", strings.Repeat("x", 101) + "\n", 16, 100, nil, true},
		{"no newline ever", strings.Repeat("\x00", 1000), 16, 64, nil, true},
		{"long lines in turn", strings.Repeat(strings.Repeat("y", 40)+"\n"+strings.Repeat("z", 70)+"\n", 3), 16, 100,
			[]string{strings.Repeat("y", 40) + "\n", strings.Repeat("z", 70) + "\n", strings.Repeat("y", 40) + "\n",
				strings.Repeat("z", 70) + "\n", strings.Repeat("y", 40) + "\n", strings.Repeat("z", 70) + "\n"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := lines.NewReader(strings.NewReader(tt.in), tt.size, tt.max)
			var got []string
			var err error
			for {
				var line []byte
				if line, err = r.Next(); err != nil {
					break
				}
				got = append(got, string(line))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if want := map[bool]error{false: io.EOF, true: lines.ErrTooLong}[tt.tooLong]; !errors.Is(err, want) {
				t.Errorf("Next() = %v; want %v", err, want)
			}
		})
	}
}

// countingReader counts the bytes read from an endless input.
type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	clear(p)
	c.n += len(p)
	return len(p), nil
}

// TestReaderBounded checks that an endless line costs the bound: it is
// refused after about the bound is read, and the line's buffer never
// grows past it.
func TestReaderBounded(t *testing.T) {
	const max = 1 << 20
	src := &countingReader{}
	r := lines.NewReader(src, 4096, max)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := r.Next(); !errors.Is(err, lines.ErrTooLong) {
		t.Fatalf("Next() = %v; want ErrTooLong", err)
	}
	runtime.ReadMemStats(&after)
	if src.n > max+4096 {
		t.Errorf("read %d bytes of an endless line; want about %d", src.n, max)
	}
	// The blocks hold the bound and a buffer more, nothing else.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > max+64<<10 {
		t.Errorf("allocated %d bytes for an endless line; want at most about %d", alloc, max)
	}
}

// TestReaderOwn checks that a line longer than the read buffer comes in a
// slice of its own, of its length, which later reads leave intact, and
// that a line from the read buffer is not said to be the caller's.
func TestReaderOwn(t *testing.T) {
	long := strings.Repeat("x", 100) + "\n"
	in := long + "short\n" + strings.Repeat("y", 50) + "\n" + "z\n"
	r := lines.NewReader(strings.NewReader(in), 16, 1000)
	type read struct {
		line string
		own  bool
	}
	var got []read
	var kept [][]byte
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, read{string(line), r.Own()})
		if r.Own() {
			if cap(line) != len(line) {
				t.Errorf("Next() = a line of %d bytes in a slice of %d; want exactly its length", len(line), cap(line))
			}
			kept = append(kept, line)
		}
	}
	want := []read{{long, true}, {"short\n", false}, {strings.Repeat("y", 50) + "\n", true}, {"z\n", false}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(read{})); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if len(kept) != 2 || string(kept[0]) != long || string(kept[1]) != strings.Repeat("y", 50)+"\n" {
		t.Errorf("lines kept after the read = %q; want the two long lines intact", kept)
	}
}

// TestDropped checks that memory goes back to the operating system for
// huge lines only: when the caller drops one, and when the blocks of one
// just joined are dropped by the reader.
func TestDropped(t *testing.T) {
	var returns int
	defer lines.CountReturns(&returns)()
	lines.Dropped(lines.HugeLine - 1)
	if returns != 0 {
		t.Errorf("Dropped(HugeLine-1) returned memory %d times; want 0", returns)
	}
	lines.Dropped(lines.HugeLine)
	if returns != 1 {
		t.Errorf("Dropped(HugeLine) returned memory %d times; want 1", returns)
	}
	returns = 0
	in := strings.Repeat("a", 1000) + "\n" + strings.Repeat("b", lines.HugeLine) + "\n"
	r := lines.NewReader(strings.NewReader(in), 64<<10, 2*lines.HugeLine)
	if _, err := r.Next(); err != nil || returns != 0 {
		t.Fatalf("Next() of a short line: %v, memory returned %d times; want nil, 0", err, returns)
	}
	if line, err := r.Next(); err != nil || len(line) != lines.HugeLine+1 || returns != 1 {
		t.Fatalf("Next() of a huge line: %d bytes, %v, memory returned %d times; want %d bytes, nil, once", len(line), err, returns, lines.HugeLine+1)
	}
}
