package server

import (
	"bytes"
	"context"
	"errors"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGuardLogs checks that an error answered with 500 is logged, and that
// a request its client gave up on (a page navigating away) is neither
// answered nor logged.
func TestGuardLogs(t *testing.T) {
	t.Parallel()
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
			srv.guard(route{method: "GET", pattern: "/api/x", handle: func(http.ResponseWriter, *http.Request) error { return tc.err }}).ServeHTTP(w, r)
			if got := logged.Len() > 0; got != tc.wantLog {
				t.Errorf("logged %q; want a log line: %v", logged.String(), tc.wantLog)
			}
			if tc.wantLog && w.Code != http.StatusInternalServerError {
				t.Errorf("status %d; want 500", w.Code)
			}
		})
	}
}

// TestGuardLogsTermText checks that the error log line of a 500, which
// goes to the terminal serve runs in, shows the control characters of the
// path and of the error (an id read from a damaged session) as text: ESC
// ] 52 would set the clipboard, ESC [ 2J clear the screen.
func TestGuardLogsTermText(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	srv, err := New(nil, Options{Token: token, ErrorLog: log.New(&logged, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/api/x%1b%5d52;c;aGk=%07", nil)
	r.Host = "127.0.0.1:7878"
	r.Header.Set("Authorization", "Bearer "+token)
	fail := errors.New("entry \x1b[2J\nforged line: corrupt")
	srv.guard(route{method: "GET", pattern: "/api/x", handle: func(http.ResponseWriter, *http.Request) error { return fail }}).ServeHTTP(httptest.NewRecorder(), r)
	line := strings.TrimSuffix(logged.String(), "\n")
	if line == "" || strings.ContainsAny(line, "\x1b\x07\n") {
		t.Errorf("logged %q; want one line without control characters", logged.String())
	}
}
