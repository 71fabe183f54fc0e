package pgtest

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestResetEmptiesWhatChanged checks which tables a reset empties: none
// of a copy as the template left it or as a reset leaves it, the table a
// test wrote to (even a row deleted since, or rolled back), a table whose
// statistics were taken, and with a table every table referring to it.
//
// tableTemplate's copies are handed out in an order TestFinishedCopyIsReset
// checks: the test does not run in parallel with it.
func TestResetEmptiesWhatChanged(t *testing.T) {
	ctx := context.Background()
	url := tableTemplate.Database(t)
	sh := tableTemplate.shape
	if sh == nil {
		t.Skip("copies are not reset on this server")
	}
	resetConn, err := pgx.Connect(ctx, url) // one for every reset, as Template keeps one
	if err != nil {
		t.Fatal(err)
	}
	defer resetConn.Close(ctx)
	for _, c := range []struct {
		name, change string
		want         []string
	}{
		{"nothing", `SELECT 1`, nil},
		{"loose row", `INSERT INTO loose (body) VALUES ('a')`, []string{"loose"}},
		{"parent row", `INSERT INTO parents VALUES (1, 'p')`, []string{"children", "parents"}},
		{"child row", `INSERT INTO parents VALUES (1, 'p'); INSERT INTO children VALUES (1, 1)`, []string{"children", "parents"}},
		{"deleted", `INSERT INTO loose (body) VALUES ('a'); DELETE FROM loose`, []string{"loose"}},
		{"rolled back", `BEGIN; INSERT INTO loose (body) VALUES ('a'); ROLLBACK`, []string{"loose"}},
		{"long text", `INSERT INTO loose (body) SELECT string_agg(md5(i::text), '') FROM generate_series(1, 2000) i`, []string{"loose"}},
		{"analyzed", `ANALYZE loose`, []string{"loose"}},
		{"after a reset", `SELECT 1`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, c.change); err != nil {
				t.Fatal(err)
			}
			got, err := sh.changed(ctx, conn)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("tables to empty: %q; want %q", got, c.want)
			}
			conn.Close(ctx)
			if !sh.reset(ctx, resetConn) {
				t.Fatal("the copy was not reset")
			}
		})
	}
}
