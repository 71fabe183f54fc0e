package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

var tableTemplate = NewTemplate(func(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE TABLE marks (n integer PRIMARY KEY); INSERT INTO marks VALUES (1);
		CREATE TABLE notes (id serial PRIMARY KEY, body text);
		CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE 'append-only'; END $$;
		CREATE TRIGGER notes_append_only BEFORE DELETE OR TRUNCATE ON notes EXECUTE FUNCTION refuse();
		CREATE TABLE parents (id integer PRIMARY KEY, body text);
		CREATE TABLE children (id integer PRIMARY KEY, parent integer REFERENCES parents);
		CREATE TABLE loose (id serial PRIMARY KEY, body text)`)
	return err
})

// TestDatabaseIsAFreshCopy checks that each test's database holds what the
// template's prepare wrote, and that one test's writes do not reach the next.
func TestDatabaseIsAFreshCopy(t *testing.T) {
	ctx := context.Background()
	for i := range 2 {
		url := tableTemplate.Database(t)
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM marks`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("copy %d: marks has %d rows; want the template's 1", i, n)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO marks VALUES (2)`); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
	}
}

func TestWithDatabase(t *testing.T) {
	got := WithDatabase("postgres://u@127.0.0.1:5432/postgres?sslmode=disable", "t_1")
	if want := "postgres://u@127.0.0.1:5432/t_1?sslmode=disable"; got != want {
		t.Errorf("WithDatabase = %q; want %q", got, want)
	}
}

// TestFinishedCopyIsReset checks that a copy a test finished with comes
// back to the next test as the template has it, rows and sequences, when
// the test left the schema alone (even past a trigger that refuses
// deletes); and that a copy whose schema or filled table changed is not
// handed out again.
func TestFinishedCopyIsReset(t *testing.T) {
	ctx := context.Background()
	exec := func(t *testing.T, url, stmt string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	var last string     // the URL of the previous subtest's copy
	var prevReused bool // whether that copy was to be reused
	for _, c := range []struct {
		name   string
		change string // what the subtest does to its copy
		reused bool   // whether the next subtest gets the same copy
	}{
		{"rows", `INSERT INTO notes (body) VALUES ('a'), ('b')`, true},
		{"trigger", `ALTER TABLE notes DISABLE TRIGGER notes_append_only`, false},
		{"filled table", `INSERT INTO marks VALUES (2)`, false},
		{"column", `ALTER TABLE notes ADD COLUMN extra integer`, false},
		{"table", `DROP TABLE notes`, false},
		{"last", `SELECT 1`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := tableTemplate.Database(t)
			if tableTemplate.shape != nil && last != "" && (url == last) != prevReused {
				t.Errorf("got copy %s after %s; want reused = %v", url, last, prevReused)
			}
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var marks, notes, next int
			if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM marks), (SELECT count(*) FROM notes),
				nextval('notes_id_seq')`).Scan(&marks, &notes, &next); err != nil {
				t.Fatal(err)
			}
			if marks != 1 || notes != 0 || next != 1 {
				t.Errorf("copy has %d marks, %d notes, next note id %d; want the template's 1, 0, 1", marks, notes, next)
			}
			exec(t, url, c.change)
			last, prevReused = url, c.reused
		})
	}
}

// TestOwnDownUp: a cluster of the test's own refuses connections while
// it is down and, up again, holds what was written before.
func TestOwnDownUp(t *testing.T) {
	t.Parallel() // a cluster of its own; after the serial tests, such as the one damaging the template
	ctx := context.Background()
	c := Own(t)
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE kept (n integer); INSERT INTO kept VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := c.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if conn, err := pgx.Connect(ctx, c.URL); err == nil {
		conn.Close(ctx)
		t.Fatal("connected to a cluster that is down")
	}
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT n FROM kept`).Scan(&n); err != nil || n != 7 {
		t.Errorf("after Down and Up, kept holds %d, %v; want 7", n, err)
	}
}
