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
