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
// and checks the state at each offset consumed against the SHA-256 of
// the text up to it, asked for as the import asks: at the last offset
// consumed, while the read goes on ahead of it.
func TestPrefixHashAt(t *testing.T) {
	text := bytes.Repeat([]byte("0123456789abcdef\n"), 300)
	const start = 40
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
