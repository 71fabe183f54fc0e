package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestCopyStrategy checks that copies are made by copying files on a test
// server (fsync off) that knows STRATEGY, and in the server's default way
// on one that syncs to disk (a checkpoint per copy would then cost a
// sync of every dirty page).
func TestCopyStrategy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	server := URL(t)
	var v15 bool
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int >= 150000`).Scan(&v15); err != nil {
		t.Fatal(err)
	}
	want := map[bool]string{true: " STRATEGY FILE_COPY", false: ""}[v15]
	if got, err := copyStrategy(ctx, server); err != nil || got != want {
		t.Errorf("copyStrategy on the test server = %q, %v; want %q", got, err, want)
	}
	if testing.Short() {
		return // a durable cluster of its own costs an initdb and a start
	}
	c, err := StartDurable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop() }()
	if got, err := copyStrategy(ctx, c.URL); err != nil || got != "" {
		t.Errorf("copyStrategy on a durable server = %q, %v; want the default", got, err)
	}
}
