package pgtest

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestProxy: a connection through the proxy works until a fault acts:
// Terminate hands the client the reply and then a terminated backend's
// FATAL error, PoolerLost a pooler's error in place of the reply, Cut
// ends the connection before the statement reaches the server (which
// never runs it); CutAll ends the connections open.
func TestProxy(t *testing.T) {
	ctx := context.Background()
	url := URL(t)
	p := NewProxy(t, url)
	connect := func() *pgx.Conn {
		t.Helper()
		c, err := pgx.Connect(ctx, p.URL(url))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		return c
	}
	var x int
	if err := connect().QueryRow(ctx, `SELECT 1`).Scan(&x); err != nil || x != 1 {
		t.Fatalf("SELECT 1 through the proxy = %d, %v", x, err)
	}
	var pg *pgconn.PgError
	tag := func(tag string) Fault {
		return func(_ int, m Message) Action {
			if !m.FromClient && m.Tag == tag {
				return Terminate
			}
			return Pass
		}
	}
	p.SetFault(tag("SELECT 1"))
	if err := connect().QueryRow(ctx, `SELECT 2`).Scan(&x); !errors.As(err, &pg) || pg.Code != "57P01" {
		t.Errorf("Terminate: %v; want the FATAL error 57P01", err)
	}
	p.SetFault(func(_ int, m Message) Action {
		if !m.FromClient && m.Tag == "SELECT 1" {
			return PoolerLost
		}
		return Pass
	})
	if err := connect().QueryRow(ctx, `SELECT 3`).Scan(&x); !errors.As(err, &pg) || pg.Code != "08P01" {
		t.Errorf("PoolerLost: %v; want the error 08P01", err)
	}
	c := connect()
	p.SetFault(func(_ int, m Message) Action {
		if m.FromClient && m.SQL == "CREATE TABLE cut (x int)" {
			return Cut
		}
		return Pass
	})
	if _, err := c.Exec(ctx, `CREATE TABLE cut (x int)`); err == nil {
		t.Error("Cut: the statement succeeded")
	}
	p.SetFault(nil)
	var n int
	if err := connect().QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'cut'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("table of the statement cut: %d, %v; want none", n, err)
	}
	c = connect()
	p.CutAll()
	if _, err := c.Exec(ctx, `SELECT 1`); err == nil {
		t.Error("a statement after CutAll succeeded")
	}
}
