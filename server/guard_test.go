package server

import (
	"bytes"
	"context"
	"errors"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestGuardLogs checks that an error answered with 500 is logged, and that
// a request its client gave up on (a page navigating away) is neither
// answered nor logged.
func TestGuardLogs(t *testing.T) {
	failure := errors.New("disk on fire")
	for _, tc := range []struct {
		name    string
		cancel  bool
		err     error
		wantLog bool
	}{
		{"server error", false, failure, true},
		{"client gone", true, context.Canceled, false},
		{"canceled inside, client still there", false, context.Canceled, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged bytes.Buffer
			srv, err := New(nil, Options{Token: token, ErrorLog: log.New(&logged, "", 0)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, "GET", "/api/x", nil)
			r.Host = "127.0.0.1:7878"
			r.Header.Set("Authorization", "Bearer "+token)
			if tc.cancel {
				cancel()
			}
			w := httptest.NewRecorder()
			srv.guard(route{"GET", "/api/x", func(http.ResponseWriter, *http.Request) error { return tc.err }}).ServeHTTP(w, r)
			if got := logged.Len() > 0; got != tc.wantLog {
				t.Errorf("logged %q; want a log line: %v", logged.String(), tc.wantLog)
			}
			if tc.wantLog && w.Code != http.StatusInternalServerError {
				t.Errorf("status %d; want 500", w.Code)
			}
		})
	}
}
