package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"
	"testing/iotest"
)

// TestPrefixHashAt reads a text through a prefixHash in reads of every
// size the readers below give, starting after a prefix hashed before,
// and checks the state at each offset consumed (the end of a line, as
// the import consumes whole lines) against the SHA-256 of the text up to
// it, asked for as the import asks: at the last offset consumed, while
// the read goes on ahead of it.
func TestPrefixHashAt(t *testing.T) {
	t.Parallel()
	text := bytes.Repeat([]byte("0123456789abcdef\n"), 300)
	const start = 2 * 17
	for _, tc := range []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := sha256.New()
			h.Write(text[:start])
			p := newPrefixHash(tc.wrap(bytes.NewReader(text[start:])), h, start)
			buf := make([]byte, 1000)
			for off := int64(start); off <= int64(len(text)); off += 17 * 7 {
				for p.n < min(off+500, int64(len(text))) {
					if _, err := p.Read(buf); err != nil {
						t.Fatal(err)
					}
				}
				p.consumed(off)
				got, err := p.at(off)
				if err != nil {
					t.Fatalf("at(%d): %v", off, err)
				}
				want := sha256.Sum256(text[:off])
				if g := hex.EncodeToString(got.Sum(nil)); g != hex.EncodeToString(want[:]) {
					t.Fatalf("at(%d) = %s; want %s", off, g, hex.EncodeToString(want[:]))
				}
			}
			if _, err := p.at(start); err == nil {
				t.Errorf("at(%d), before the offset consumed and its read dropped: no error", start)
			}
		})
	}
}

// TestPrefixHashKeepsNoLongLine reads a line of 1 MiB through a
// prefixHash, 4 KiB at a time, and checks that it keeps none of the
// line's reads but the one its newline is in, up to the newline, before
// the import consumes the line; then the state at the line's end, and at
// the end of a last line without a newline.
func TestPrefixHashKeepsNoLongLine(t *testing.T) {
	t.Parallel()
	long := append(bytes.Repeat([]byte("x"), 1<<20), '\n')
	text := append(append([]byte("{}\n"), long...), "{}"...)
	p := newPrefixHash(bytes.NewReader(text), sha256.New(), 0)
	buf := make([]byte, 4<<10)
	for {
		if _, err := p.Read(buf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	p.consumed(3)
	kept := 0
	for _, r := range p.reads {
		kept += len(r.data)
	}
	if kept > len(buf) {
		t.Errorf("%d bytes kept of a text of %d read %d at a time; want no more than one read's", kept, len(text), len(buf))
	}
	for _, off := range []int64{3, int64(3 + len(long)), int64(len(text))} {
		p.consumed(off)
		got, err := p.at(off)
		if err != nil {
			t.Fatalf("at(%d): %v", off, err)
		}
		if want := sha256.Sum256(text[:off]); !bytes.Equal(got.Sum(nil), want[:]) {
			t.Errorf("at(%d): the state of other bytes", off)
		}
	}
}
