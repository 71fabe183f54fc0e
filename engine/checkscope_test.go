package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/internal/testdb"
)

// TestSessionCheckComparesIndexes damages one index entry of a session's
// row in the file (a letter of the column the index holds), leaving the
// row itself as it was: the session's check finds that the index
// disagrees with the table, another session's check finds nothing (it
// reads its own rows only), and the whole database's check and
// CheckStructure find it through integrity_check.
func TestSessionCheckComparesIndexes(t *testing.T) {
	ctx := context.Background()
	template, id := damageTemplate(t)
	other := addSession(t, template)
	for _, tc := range []struct {
		index string
		// column is the text of a column of the damaged session's row
		// that the index holds: the label entry's type, the first
		// entry's id.
		column func(t *testing.T, path string) string
	}{
		{"entries_by_type", func(*testing.T, string) string { return "label" }},
		{"sqlite_autoindex_entries_1", func(t *testing.T, path string) string {
			return queryString(t, path, `SELECT e.id FROM entries e JOIN sessions s ON s.pk = e.session WHERE s.id = ? AND e.seq = 1`, id)
		}},
	} {
		t.Run(tc.index, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			copyFile(t, template, path)
			if err := testdb.DamageIndexPage(ctx, path, tc.index, tc.column(t, path)); err != nil {
				t.Fatal(err)
			}
			db, err := engine.Open(ctx, path, engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Check(ctx, id); !errors.Is(err, sessiontree.ErrCorrupt) || !strings.Contains(err.Error(), tc.index) {
				t.Errorf("Check(damaged session) = %v; want ErrCorrupt naming index %s", err, tc.index)
			}
			if err := db.Check(ctx, other); err != nil {
				t.Errorf("Check(other session) = %v; want nil: its rows are whole", err)
			}
			if err := db.Check(ctx, ""); !errors.Is(err, sessiontree.ErrCorrupt) {
				t.Errorf("Check(whole database) = %v; want ErrCorrupt", err)
			}
			if err := db.CheckStructure(ctx); !errors.Is(err, sessiontree.ErrCorrupt) || !strings.Contains(err.Error(), "integrity_check") {
				t.Errorf("CheckStructure() = %v; want ErrCorrupt from integrity_check", err)
			}
		})
	}
}

// addSession adds a session of two messages to the database at path and
// closes it again (checkpointed).
func addSession(t *testing.T, path string) string {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx, path, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := newSession(t, db)
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	for _, text := range []string{"a", "b"} {
		if _, err := s.AppendMessage(ctx, userMsg(text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return st.ID()
}

func queryString(t *testing.T, path, query string, a ...any) string {
	t.Helper()
	raw := rawDB(t, path)
	defer raw.Close()
	var s string
	if err := raw.QueryRowContext(context.Background(), query, a...).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCheckReportsTheFirstDamageInLogOrder damages two entries of a
// session of many chunks of the check's workers: the check names the
// earlier one, whichever worker derives it first, and stops.
func TestCheckReportsTheFirstDamageInLogOrder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, engine.Options{})
	st := newSession(t, db)
	drafts := make([]sessiontree.Draft, 2000)
	for i := range drafts {
		drafts[i] = sessiontree.Draft{Type: sessiontree.TypeMessage,
			Fields: json.RawMessage(`{"message":` + string(userMsg(fmt.Sprint("entry ", i))) + `}`)}
	}
	entries, err := st.AppendAll(ctx, drafts, sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	for _, stmt := range []string{`DROP TRIGGER entries_no_update`,
		`UPDATE entries SET raw = replace(raw, 'entry 1700', 'entry 1701') WHERE seq = 1701`,
		`UPDATE entries SET raw = replace(raw, 'entry 600', 'entry 601') WHERE seq = 601`} {
		if _, err := raw.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		err := db.Check(ctx, st.ID())
		var ce *sessiontree.CorruptError
		if !errors.As(err, &ce) || ce.EntryID != entries[600].ID {
			t.Fatalf("Check() = %v; want a CorruptError naming entry %s (seq 601)", err, entries[600].ID)
		}
	}
	// Repaired, or the helper's closing check fails the test.
	for _, stmt := range []string{
		`UPDATE entries SET raw = replace(raw, 'entry 1701', 'entry 1700') WHERE seq = 1701`,
		`UPDATE entries SET raw = replace(raw, 'entry 601', 'entry 600') WHERE seq = 601`} {
		if _, err := raw.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Check(ctx, st.ID()); err != nil {
		t.Errorf("Check() after the repair = %v", err)
	}
}
