package pgtest

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
)

// refTemplate has a filled table and three empty ones, one of which
// refers to another by a foreign key.
var refTemplate = NewTemplate(func(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE TABLE marks (n integer PRIMARY KEY); INSERT INTO marks VALUES (1);
		CREATE TABLE parents (id integer PRIMARY KEY, body text);
		CREATE TABLE children (id integer PRIMARY KEY, parent integer REFERENCES parents);
		CREATE TABLE loose (id serial PRIMARY KEY, body text)`)
	return err
})

// TestResetEmptiesWhatChanged checks which tables a reset empties: none
// of a copy as the template left it or as a reset leaves it, the table a
// test wrote to (even a row deleted since, or rolled back), a table whose
// statistics were taken, and with a table every table referring to it.
func TestResetEmptiesWhatChanged(t *testing.T) {
	ctx := context.Background()
	url := refTemplate.Database(t)
	sh := refTemplate.shape
	if sh == nil {
		t.Skip("copies are not reset on this server")
	}
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
			if !sh.reset(ctx, url) {
				t.Fatal("the copy was not reset")
			}
		})
	}
}
