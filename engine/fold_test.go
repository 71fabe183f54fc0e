package engine_test

import (
	"database/sql"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
)

// TestFoldRuneIsFTS5s holds sessiontree.FoldRune, the case folding of
// search on every engine, to FTS5's trigram tokenizer's, which the
// SQLite engine's index applies: every character of the Basic
// Multilingual Plane and every other one Go's tables give a case folds
// alike by both, or apart by both. Each character is put before "ab" in
// one document, and the index's vocabulary gives, at its place, the
// trigram it made of it.
func TestFoldRuneIsFTS5s(t *testing.T) {
	t.Parallel()
	var runes []rune
	for r := rune(1); r <= unicode.MaxRune; r++ {
		switch {
		case r >= 0xd800 && r < 0xe000:
		case r < 0x10000, r&0xfffe == 0xfffe, unicode.SimpleFold(r) != r,
			unicode.ToLower(r) != r, unicode.ToUpper(r) != r:
			runes = append(runes, r)
		}
	}
	folds := fts5Folds(t, runes)
	byFTS5, byGo := map[rune]rune{}, map[rune]rune{}
	for i, r := range runes {
		fts, ours := folds[i], sessiontree.FoldRune(r)
		if prev, ok := byFTS5[fts]; ok && prev != ours {
			t.Errorf("%U: FTS5 folds it to %U as a character FoldRune folds to %U, but FoldRune folds it to %U", r, fts, prev, ours)
		}
		if prev, ok := byGo[ours]; ok && prev != fts {
			t.Errorf("%U: FoldRune folds it to %U as a character FTS5 folds to %U, but FTS5 folds it to %U", r, ours, prev, fts)
		}
		byFTS5[fts], byGo[ours] = ours, fts
	}
}

// fts5Folds returns the character FTS5's trigram tokenizer folds each
// of runes to.
func fts5Folds(t *testing.T, runes []rune) []rune {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE f USING fts5(x, tokenize = 'trigram');
CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')`); err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	for _, r := range runes {
		doc.WriteRune(r)
		doc.WriteString("ab")
	}
	if _, err := db.Exec(`INSERT INTO f VALUES (?)`, doc.String()); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT term, offset FROM v WHERE offset % 3 = 0`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := make([]rune, len(runes))
	for rows.Next() {
		var term string
		var off int
		if err := rows.Scan(&term, &off); err != nil {
			t.Fatal(err)
		}
		out[off/3], _ = utf8.DecodeRuneInString(term)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for i, r := range out {
		if r == 0 {
			t.Fatalf("no trigram of %U", runes[i])
		}
	}
	return out
}
