package engine

import (
	"context"
	"database/sql"
	"testing"
)

// TestTrigramsAsTheTokenizer counts the tokens of texts the way the index
// check does and compares them with what FTS5's trigram tokenizer made of
// them (its document sizes), and looks up each trigram the check would:
// NULs, invalid UTF-8, CJK, astral characters, case, quotes.
func TestTrigramsAsTheTokenizer(t *testing.T) {
	t.Parallel()
	texts := []string{
		"", "a", "ab", "abc", "abcdef", "two words\n\n",
		"ab\x00cdef", "\x00\x00abc", "ab\x00\x00cd",
		"abc\x80\xffdefg", "ab\xc0", "\xc0\x80\x80\x80abc", "\xed\xb0\x80abc",
		"日本語のテキスト", "emoji 😀 here 👍🏽", "İstanbul ÀÉ straße", "e\u0301te\u0301",
		`say "hi" to "them"`, "UPPER lower MiXeD",
	}
	ctx := context.Background()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE t USING fts5 (b, tokenize = 'trigram')`); err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if _, err := db.ExecContext(ctx, `INSERT INTO t (rowid, b) VALUES (?, CAST(? AS TEXT))`, i+1, []byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	for i, text := range texts {
		var sz []byte
		err := db.QueryRowContext(ctx, `SELECT sz FROM t_docsize WHERE id = ?`, i+1).Scan(&sz)
		if err != nil {
			t.Fatal(err)
		}
		n, ok := varint(sz)
		if got := trigrams([]byte(text)); !ok || uint64(got) != n {
			t.Errorf("trigrams(%q) = %d; the tokenizer made %d tokens (%x)", text, got, n, sz)
		}
		var tris []string
		eachTrigram([]byte(text), func(i int, tri string) bool {
			if i != len(tris) {
				t.Errorf("text %q: trigram %d given as %d", text, len(tris), i)
			}
			tris = append(tris, tri)
			return true
		})
		if len(tris) != trigrams([]byte(text)) {
			t.Errorf("text %q: eachTrigram gave %d trigrams, trigrams() counts %d", text, len(tris), trigrams([]byte(text)))
		}
		for _, tri := range tris {
			var one int
			err := db.QueryRowContext(ctx, `SELECT 1 FROM t WHERE t MATCH ? AND rowid = ?`, quotePhrase(tri), i+1).Scan(&one)
			if err != nil {
				t.Errorf("text %q: trigram %q not found: %v", text, tri, err)
			}
		}
	}
}

func TestVarint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		b    []byte
		want uint64
		ok   bool
	}{
		{[]byte{0x00}, 0, true},
		{[]byte{0x7f}, 127, true},
		{[]byte{0x81, 0x17}, 151, true},
		{[]byte{0x81, 0x80, 0x00}, 1 << 14, true},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1<<64 - 1, true},
		{[]byte{0x81}, 0, false},
		{nil, 0, false},
	} {
		if got, ok := varint(tc.b); got != tc.want || ok != tc.ok {
			t.Errorf("varint(%x) = %d, %v; want %d, %v", tc.b, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSampledTrigramsFindAChangedCharacter changes each character of a
// text but the two newlines the view ends it with: one of the trigrams
// the content comparison looks up is then not among the original's.
func TestSampledTrigramsFindAChangedCharacter(t *testing.T) {
	t.Parallel()
	const text = "abcdefghijklmnopq\n\n"
	all := map[string]bool{}
	eachTrigram([]byte(text), func(_ int, tri string) bool {
		all[tri] = true
		return true
	})
	for p := 0; p < len(text)-2; p++ {
		changed := []byte(text)
		changed[p] = 'Z'
		count, found := trigrams(changed), false
		eachTrigram(changed, func(i int, tri string) bool {
			found = found || sampled(i, count) && !all[tri]
			return true
		})
		if !found {
			t.Errorf("character %d changed: every sampled trigram of %q is the original's", p, changed)
		}
	}
}
