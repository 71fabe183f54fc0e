package pgengine

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
)

// refoldMigration is the migration that reindexes the text folded by the
// rule before sessiontree.FoldRune.
const refoldMigration = "0012_search_fold.sql"

// refoldClass returns refoldMigration's statement and the SQL of its
// character class.
func refoldClass(t *testing.T) (stmt, class string) {
	t.Helper()
	b, err := fs.ReadFile(migrate.PostgresFiles, refoldMigration)
	if err != nil {
		t.Fatal(err)
	}
	stmt = string(b)
	_, after, ok := strings.Cut(stmt, "body ~ (")
	class, _, ok2 := strings.Cut(after, ")\n)")
	if !ok || !ok2 {
		t.Fatalf("%s: no class in %q", refoldMigration, stmt)
	}
	return stmt, class
}

// TestRefoldClassIsFoldRunes: the characters whose text the refold
// migration reindexes are those FoldRune folds otherwise than the
// lower-casing that folded search_text before (strings.ToLower), as
// PostgreSQL's regular expressions read the class.
func TestRefoldClassIsFoldRunes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestDB(t, Options{})
	_, class := refoldClass(t)
	// Under -short the server reads planes 0 and 1 only, a ninth of the
	// code points (1.2 s of its CPU for all of them): every character
	// FoldRune folds otherwise is there, or got would lack it; only a
	// character of the class beyond them is left to the full run.
	last := unicode.MaxRune
	if testing.Short() {
		last = 0x1FFFF
	}
	var got []int64
	err := db.db.SelectContext(ctx, &got, `SELECT c FROM generate_series(128, $1::int) c
WHERE (c < 55296 OR c > 57343) AND chr(c) ~ (`+class+`) ORDER BY c`, last)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) && sessiontree.FoldRune(r) != unicode.ToLower(r) {
			want = append(want, int64(r))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the class of %s matches %d characters; want the %d FoldRune folds otherwise than unicode.ToLower", refoldMigration, len(got), len(want))
	}
}

// TestRefoldMigration: a database whose search_text was folded by
// strings.ToLower, as before FoldRune, has the sessions holding a text
// the two fold otherwise indexed again by the migration: their rows
// deleted and their marks reset, so that the catch-up writes them folded
// anew, and Check, which finds the rows stale before, finds nothing
// after; the other sessions keep their rows.
func TestRefoldMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSearchFixture(t) // ASCII, é and CJK text: folded alike
	_, id, user := userSession(t, f.db)
	user("plain")
	user("σας took 12.5µs")
	f.catchUp(t)
	// The database as the lower-casing left it.
	if _, err := f.db.db.ExecContext(ctx, `UPDATE search_text SET folded = $1 WHERE body = $2`,
		strings.ToLower("σας took 12.5µs\n\n"), "σας took 12.5µs\n\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Check(ctx, id); err == nil {
		t.Fatal("Check of text folded by the old rule = nil; want it reported")
	}
	rows := func(id string) (n, indexed int) {
		t.Helper()
		err := f.db.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM search_text WHERE session = s.pk), indexed_count
FROM sessions s WHERE id = $1`, id).Scan(&n, &indexed)
		if err != nil {
			t.Fatal(err)
		}
		return n, indexed
	}
	keptRows, keptMark := rows(f.id)
	stmt, _ := refoldClass(t)
	if _, err := f.db.db.ExecContext(ctx, stmt); err != nil {
		t.Fatal(err)
	}
	if n, indexed := rows(id); n != 0 || indexed != 0 {
		t.Errorf("the session with µ and ς after the migration: %d rows, mark %d; want 0, 0", n, indexed)
	}
	if n, indexed := rows(f.id); n != keptRows || indexed != keptMark || n == 0 {
		t.Errorf("the session without after the migration: %d rows, mark %d; want %d, %d (kept)", n, indexed, keptRows, keptMark)
	}
	f.catchUp(t)
	for _, id := range []string{id, f.id} {
		if err := f.db.Check(ctx, id); err != nil {
			t.Errorf("Check(%s) after the catch-up = %v", id, err)
		}
	}
	f.view(t, func(tx *Tx) {
		keys, err := tx.MatchKeys(sessiontree.SearchScope{}, phrase("σασ"), 10)
		if err != nil || len(keys) != 1 {
			t.Errorf(`MatchKeys("σασ") after the catch-up = %v, %v; want the entry`, keys, err)
		}
	})
}
