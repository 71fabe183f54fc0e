package pgengine

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// parameterACL serializes the tests' grants and revokes on
// commit_delay: they update one row of pg_parameter_acl, and the server
// refuses two at once ("tuple concurrently updated").
var parameterACL sync.Mutex

// poolSettings returns commit_delay and commit_siblings as each of n
// connections of db's pool has them, all held at once so that the pool
// makes n of them: the first, whose probe set them, and later ones,
// which start with them.
func poolSettings(t *testing.T, db *DB, n int) [][2]string {
	t.Helper()
	ctx := context.Background()
	var got [][2]string
	for range n {
		c, err := db.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var s [2]string
		if err := c.QueryRowContext(ctx, `SELECT current_setting('commit_delay'), current_setting('commit_siblings')`).Scan(&s[0], &s[1]); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	return got
}

// delayRole creates a login role for the test's database at u, with
// stmts run after (%s in them is the role), and returns the URL of the
// database as that role. The role goes with the test.
func delayRole(t *testing.T, u, suffix string, stmts ...string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var role string
	if err := conn.QueryRow(ctx, `SELECT 'cd_' || current_database() || $1`, suffix).Scan(&role); err != nil {
		t.Fatal(err)
	}
	run := func(stmt string) {
		parameterACL.Lock()
		defer parameterACL.Unlock()
		if _, err := conn.Exec(ctx, strings.ReplaceAll(stmt, "%s", role)); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	run(`CREATE ROLE %s LOGIN PASSWORD 'cd'`)
	run(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO %s`)
	for _, s := range stmts {
		run(s)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		parameterACL.Lock()
		defer parameterACL.Unlock()
		for _, s := range []string{`REVOKE SET ON PARAMETER commit_delay FROM %s`, `DROP OWNED BY %s`, `DROP ROLE %s`} {
			if _, err := conn.Exec(ctx, strings.ReplaceAll(s, "%s", role)); err != nil {
				t.Errorf("%s: %v", s, err)
			}
		}
	})
	r, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	r.User = url.UserPassword(role, "cd")
	return r.String()
}

// withParams returns u with the query parameters kv (name, value, ...).
func withParams(t *testing.T, u string, kv ...string) string {
	t.Helper()
	r, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := r.Query()
	for i := 0; i < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	r.RawQuery = q.Encode()
	return r.String()
}

// TestCommitDelay: the engine's connections set the server's
// commit_delay (100 µs, commit_siblings 1) when the role may set it (a
// superuser, or a role granted SET ON PARAMETER) and nobody chose one;
// a role that may not, or whose delay an administrator chose (ALTER
// ROLE … SET), opens with the server's settings untouched; a URL's
// commit_delay is applied as given on every connection, with
// commit_siblings 1 unless the URL gives it, and 0 asks for nothing.
func TestCommitDelay(t *testing.T) {
	t.Parallel()
	u := pgtest.Migrated.Database(t)
	cases := []struct {
		name string
		url  string
		want [2]string
	}{
		{"superuser", u, [2]string{"100", "1"}},
		{"role not allowed", delayRole(t, u, "_no"), [2]string{"0", "5"}},
		{"role granted", delayRole(t, u, "_granted", `GRANT SET ON PARAMETER commit_delay TO %s`), [2]string{"100", "1"}},
		{"granted, the URL's siblings", withParams(t, delayRole(t, u, "_sib", `GRANT SET ON PARAMETER commit_delay TO %s`), "commit_siblings", "3"), [2]string{"100", "3"}},
		{"the role's own delay", delayRole(t, u, "_own", `GRANT SET ON PARAMETER commit_delay TO %s`, `ALTER ROLE %s SET commit_delay = 30`), [2]string{"30", "5"}},
		{"the URL's delay", withParams(t, u, "commit_delay", "50"), [2]string{"50", "1"}},
		{"the URL's delay and siblings", withParams(t, u, "commit_delay", "200", "commit_siblings", "2"), [2]string{"200", "2"}},
		{"the URL's 0", withParams(t, u, "commit_delay", "0"), [2]string{"0", "5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, err := Open(context.Background(), c.url, Options{})
			if err != nil {
				t.Fatalf("Open = %v", err)
			}
			defer db.Close()
			for i, got := range poolSettings(t, db, 3) {
				if got != c.want {
					t.Errorf("connection %d: commit_delay, commit_siblings = %v; want %v", i, got, c.want)
				}
			}
			if got, err := db.ServerSetting(context.Background(), "commit_delay"); err != nil || got != c.want[0] {
				t.Errorf("ServerSetting(commit_delay) = %q, %v; want %q", got, err, c.want[0])
			}
		})
	}
}

// TestCommitDelayRefused: a URL asking for a commit_delay the role may
// not set fails Open with a *SettingError naming the setting and the
// GRANT that allows it (ErrStorage, the server's error inside), not the
// bare FATAL of a refused connection; granted, the same URL opens.
func TestCommitDelayRefused(t *testing.T) {
	t.Parallel()
	u := pgtest.Migrated.Database(t)
	role := delayRole(t, u, "_ref")
	_, err := Open(context.Background(), withParams(t, role, "commit_delay", "100"), Options{Attempts: 1})
	var se *SettingError
	var pg *pgconn.PgError
	if !errors.As(err, &se) || se.Name != "commit_delay" || se.Value != "100" || !errors.Is(err, sessiontree.ErrStorage) ||
		!errors.As(err, &pg) || pg.Code != codeNoPrivilege {
		t.Fatalf("Open with a commit_delay the role may not set = %v; want a *SettingError for commit_delay=100, ErrStorage, SQLSTATE 42501", err)
	}
	if want := "GRANT SET ON PARAMETER commit_delay TO " + se.Role; !strings.Contains(err.Error(), want) || !strings.HasPrefix(se.Role, "cd_") {
		t.Errorf("Open's error = %q; want it to say %q", err, want)
	}
	execRole(t, u, `GRANT SET ON PARAMETER commit_delay TO `+se.Role)
	db, err := Open(context.Background(), withParams(t, role, "commit_delay", "100"), Options{})
	if err != nil {
		t.Fatalf("Open once granted = %v", err)
	}
	defer db.Close()
	if got := poolSettings(t, db, 2); got[0][0] != "100" || got[1][0] != "100" {
		t.Errorf("commit_delay, commit_siblings once granted = %v; want commit_delay 100 on both", got)
	}
}

// TestCommitDelayInvalid: a commit_delay the server cannot take is the
// server's refusal in a *SettingError, naming the setting.
func TestCommitDelayInvalid(t *testing.T) {
	t.Parallel()
	u := pgtest.Migrated.Database(t)
	_, err := Open(context.Background(), withParams(t, u, "commit_delay", "soon"), Options{Attempts: 1})
	var se *SettingError
	if !errors.As(err, &se) || se.Name != "commit_delay" || !strings.Contains(err.Error(), "commit_delay=soon") {
		t.Fatalf("Open with commit_delay=soon = %v; want a *SettingError naming commit_delay=soon", err)
	}
}

// execRole runs stmt on a connection of the test's own to u.
func execRole(t *testing.T, u, stmt string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	parameterACL.Lock()
	defer parameterACL.Unlock()
	if _, err := conn.Exec(context.Background(), stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
