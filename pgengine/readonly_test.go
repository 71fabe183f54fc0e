package pgengine_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
	"github.com/sessiontree/sessiontree/pgengine"
)

// readOnlyURLs are URLs of the database at u that cannot be written: as
// a role granted SELECT alone, and with every transaction read-only (a
// standby, a role or database set so). The role goes with the test.
func readOnlyURLs(t *testing.T, u string) map[string]string {
	t.Helper()
	conn := connect(t, u)
	var role string
	if err := conn.QueryRow(context.Background(), `SELECT 'ro_' || current_database()`).Scan(&role); err != nil {
		t.Fatal(err)
	}
	execAll(t, u, `CREATE ROLE `+role+` LOGIN PASSWORD 'ro'`, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO `+role)
	t.Cleanup(func() { execAll(t, u, `DROP OWNED BY `+role, `DROP ROLE `+role) })
	asRole, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	asRole.User = url.UserPassword(role, "ro")
	readOnly, _ := url.Parse(u)
	q := readOnly.Query()
	q.Set("default_transaction_read_only", "on")
	readOnly.RawQuery = q.Encode()
	return map[string]string{"select-only role": asRole.String(), "read-only transactions": readOnly.String()}
}

// TestOpenCannotWrite: a database that cannot be written opens when its
// schema is current, reads, and refuses a write with ErrReadOnly, as a
// database file that cannot be written does on SQLite; with a migration
// pending Open fails with ErrReadOnly naming that migration (not
// ErrStorage naming 0001_init.sql), and nothing is written; so it does
// with derived values to compute again (derived_redo). Header sums left
// to fill (header_checksum_fill: an older engine's sessions, migration
// 19) do not stop it: such a header reads as not yet summed, and the next
// Open that may write sums it.
func TestOpenCannotWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, u := openDB(t)
	st := newSession(t, db)
	if _, err := st.Append(ctx, userDraft("a"), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	urls := readOnlyURLs(t, u)
	for name, ro := range urls {
		rdb, err := pgengine.Open(ctx, ro, pgengine.Options{})
		if err != nil {
			t.Fatalf("%s: Open of a current database = %v", name, err)
		}
		if _, err := rdb.OpenSession(ctx, st.ID()); err != nil {
			t.Errorf("%s: OpenSession = %v", name, err)
		}
		if _, err := rdb.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/w"}); !errors.Is(err, sessiontree.ErrReadOnly) {
			t.Errorf("%s: CreateSession = %v; want ErrReadOnly", name, err)
		}
		rdb.Close()
	}
	migs, err := migrate.Load(migrate.PostgresFiles)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(migs, func(m migrate.Migration) bool { return strings.HasSuffix(m.Name, "_derived_redo.sql") })
	if i < 0 {
		t.Fatal("no derived_redo migration")
	}
	last := migs[i]
	// The database as before that migration.
	execAll(t, u, `ALTER TABLE derived_redo RENAME TO usage_days_redo`, fmt.Sprintf(`DELETE FROM schema_migrations WHERE version = %d`, last.Version))
	for name, ro := range urls {
		rdb, err := pgengine.Open(ctx, ro, pgengine.Options{})
		if err == nil {
			rdb.Close()
		}
		if !errors.Is(err, sessiontree.ErrReadOnly) || !strings.Contains(err.Error(), last.Name) {
			t.Errorf("%s: Open with %s pending = %v; want ErrReadOnly naming it", name, last.Name, err)
		}
	}
	var n int
	if err := connect(t, u).QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(migs)-1 {
		t.Errorf("records after = %d, %v; want %d", n, err, len(migs)-1)
	}
	rw, err := pgengine.Open(ctx, u, pgengine.Options{}) // a role that may write migrates it
	if err != nil {
		t.Fatal(err)
	}
	rw.Close()
	// A session whose derived values are to be computed again, which a
	// read-only Open cannot do either.
	execAll(t, u, `INSERT INTO derived_redo SELECT pk FROM sessions`)
	for name, ro := range urls {
		rdb, err := pgengine.Open(ctx, ro, pgengine.Options{})
		if err == nil {
			rdb.Close()
		}
		if !errors.Is(err, sessiontree.ErrReadOnly) {
			t.Errorf("%s: Open with derived values to compute again = %v; want ErrReadOnly", name, err)
		}
	}
	execAll(t, u, `DELETE FROM derived_redo`)
	// A session an older engine created, whose header is to be summed.
	execAll(t, u, `UPDATE sessions SET header_checksum = NULL`, `INSERT INTO header_checksum_fill SELECT pk FROM sessions`)
	for name, ro := range urls {
		rdb, err := pgengine.Open(ctx, ro, pgengine.Options{})
		if err != nil {
			t.Errorf("%s: Open with a header sum to fill = %v; want it open", name, err)
			continue
		}
		if err := rdb.Check(ctx, st.ID()); err != nil {
			t.Errorf("%s: Check of a session whose header is to be summed = %v", name, err)
		}
		rdb.Close()
	}
	openURL(t, u) // sums it; Check clean at its cleanup
}
