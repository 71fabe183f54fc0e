package pgengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/sqltx"
)

// TestErrorsGetSentinels: what is retried inside, and what each failure
// is reported as once it is not.
func TestErrorsGetSentinels(t *testing.T) {
	t.Parallel()
	serialization := &pgconn.PgError{Code: codeSerialization}
	tests := []struct {
		name      string
		err       error
		retryable bool
		want      error
	}{
		{"serialization failure", serialization, true, sessiontree.ErrConflict},
		{"deadlock", &pgconn.PgError{Code: codeDeadlock}, true, sessiontree.ErrConflict},
		{"connection lost", io.ErrUnexpectedEOF, true, sessiontree.ErrStorage},
		{"server shutting down", &pgconn.PgError{Code: "57P01"}, true, sessiontree.ErrStorage},
		{"server starting up", fmt.Errorf("connect: %w", &pgconn.PgError{Code: "57P03"}), true, sessiontree.ErrStorage},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true, sessiontree.ErrStorage},
		{"password refused", fmt.Errorf("connect: %w", &pgconn.PgError{Code: "28P01"}), false, sessiontree.ErrStorage},
		{"commit lost", &sqltx.CommitError{Err: io.ErrUnexpectedEOF}, false, sessiontree.ErrStorage},
		{"other server error", &pgconn.PgError{Code: "42P01"}, false, sessiontree.ErrStorage},
		{"sentinel kept", &sessiontree.EntryNotFoundError{ID: "x"}, false, sessiontree.ErrNotFound},
		{"context", context.Canceled, false, context.Canceled},
	}
	for _, tt := range tests {
		if got := retryable(tt.err); got != tt.retryable {
			t.Errorf("retryable(%s) = %v; want %v", tt.name, got, tt.retryable)
		}
		if got := storageErr(tt.err); !errors.Is(got, tt.want) || !errors.Is(got, tt.err) {
			t.Errorf("storageErr(%s) = %v; want it to match %v and wrap the cause", tt.name, got, tt.want)
		}
	}
}

// TestRetryIsBounded: a failure worth retrying is tried Attempts times,
// then reported.
func TestRetryIsBounded(t *testing.T) {
	t.Parallel()
	db := &DB{opts: Options{Attempts: 3}}
	calls := 0
	err := db.retry(context.Background(), "write", func() error {
		calls++
		return &pgconn.PgError{Code: codeDeadlock}
	})
	if calls != 3 || !errors.Is(err, sessiontree.ErrConflict) {
		t.Errorf("retry of a deadlock: %d calls, %v; want 3 calls and ErrConflict", calls, err)
	}
	calls = 0
	err = db.retry(context.Background(), "write", func() error {
		calls++
		return &sqltx.CommitError{Err: io.EOF}
	})
	if calls != 1 || !errors.Is(err, sessiontree.ErrStorage) {
		t.Errorf("retry of a lost commit: %d calls, %v; want 1 call and ErrStorage", calls, err)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"postgres://u:secret@h:5432/db", "postgres://u:xxxxx@h:5432/db"},
		{"postgres://u@h/db?password=secret&sslmode=disable", "postgres://u@h/db?password=xxxxx&sslmode=disable"},
		{"host=h password=secret", "PostgreSQL database"},
		{"postgres://h/db", "postgres://h/db"},
		// The password of the client's key (libpq's and pgx's sslpassword)
		// is as secret as the role's.
		{"postgres://u@h/db?sslmode=verify-full&sslpassword=secret", "postgres://u@h/db?sslmode=verify-full&sslpassword=xxxxx"},
	}
	for _, tt := range tests {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
