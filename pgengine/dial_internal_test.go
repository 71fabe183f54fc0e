package pgengine

import (
	"context"
	"net/url"
	"testing"

	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// TestOpenWithKeepaliveParameters: a URL with libpq's keepalive and user
// timeout parameters opens (the server refuses them as settings).
func TestOpenWithKeepaliveParameters(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.Migrated.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("tcp_user_timeout", "5000")
	q.Set("keepalives_idle", "7")
	u.RawQuery = q.Encode()
	db, err := Open(context.Background(), u.String(), Options{})
	if err != nil {
		t.Fatalf("Open with tcp_user_timeout and keepalives_idle = %v", err)
	}
	db.Close()
}
