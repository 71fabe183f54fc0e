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
	_, err = conn.Exec(ctx, `CREATE TABLE marks (n integer PRIMARY KEY); INSERT INTO marks VALUES (1)`)
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
