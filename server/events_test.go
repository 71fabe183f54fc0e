package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// sseEvent is one event as a browser's EventSource dispatches it.
type sseEvent struct {
	id, event, data string
}

// readEvents reads n events from an event stream the way the HTML
// standard says a browser does: a line ends at CR LF, CR or LF, a blank
// line dispatches the event, data lines are joined with LF, and a line
// whose field is none of id, event and data is ignored.
func readEvents(t *testing.T, body io.Reader, n int) []sseEvent {
	t.Helper()
	r := bufio.NewReader(body)
	var out []sseEvent
	var cur sseEvent
	var data []string
	for len(out) < n {
		line, err := readSSELine(r)
		if err != nil {
			t.Fatalf("stream ended after %d events: %v", len(out), err)
		}
		if line == "" {
			if data != nil {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = sseEvent{id: cur.id}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			cur.id = value
		case "event":
			cur.event = value
		case "data":
			data = append(data, value)
		}
	}
	return out
}

// readSSELine reads one line ended by CR LF, CR or LF, without its end.
func readSSELine(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		c, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		switch c {
		case '\n':
			return b.String(), nil
		case '\r':
			if next, err := r.Peek(1); err == nil && next[0] == '\n' {
				r.ReadByte()
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
}

// openEvents opens the event stream at path, failing unless it answers 200.
func (f *fixture) openEvents(path string) io.ReadCloser {
	f.t.Helper()
	req, _ := http.NewRequest("GET", f.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		f.t.Fatalf("GET %s = %d", path, resp.StatusCode)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp.Body
}

// TestEventsCarriageReturn checks that an entry whose stored line holds a
// carriage return between its JSON tokens (kept byte for byte from an
// imported file) reaches an EventSource whole: a CR ends a line of the
// stream, so written as it is it cut the entry's data short.
func TestEventsCarriageReturn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	file := filepath.Join(t.TempDir(), "cr.jsonl")
	lines := `{"type":"session","version":3,"id":"cr","timestamp":"2026-01-01T00:00:00Z","cwd":"/x"}` + "\n" +
		`{"type":"custom",` + "\r" + `"id":"aaaa1111","parentId":null,"timestamp":"2026-01-01T00:00:00Z","customType":"a"}` + "\n" +
		`{"type":"custom",` + "\r\r" + `"id":"bbbb2222","parentId":"aaaa1111","timestamp":"2026-01-01T00:00:01Z","customType":"b"}` + "\n"
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := f.store.Import(context.Background(), []string{file}, store.ImportOptions{})
	if err != nil || res.Files[0].Err != nil || res.Entries != 2 {
		t.Fatalf("import: %v %+v", err, res.Files)
	}
	events := readEvents(t, f.openEvents("/api/sessions/cr/events?after=0"), 2)
	for i, want := range []string{"aaaa1111", "bbbb2222"} {
		var e struct{ ID, CustomType string }
		if err := json.Unmarshal([]byte(events[i].data), &e); err != nil || e.ID != want {
			t.Errorf("event %d: data %q (%v); want the entry %s whole", i, events[i].data, err, want)
		}
		if events[i].event != "entry" || events[i].id != []string{"1", "2"}[i] {
			t.Errorf("event %d: event %q, id %q", i, events[i].event, events[i].id)
		}
	}
}

// TestEventsUTF8 checks that an entry stored with bytes that are not
// UTF-8 (kept byte for byte from an imported file, as
// testdata/piedge/invalid-utf8 has them) reaches the stream as UTF-8 JSON
// with U+FFFD where pi's reader puts it, as every other JSON answer does
// (view.UTF8JSON): written as stored, the event's data was not text.
func TestEventsUTF8(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	res, err := f.store.Import(context.Background(), []string{"../testdata/piedge/invalid-utf8.jsonl"}, store.ImportOptions{})
	if err != nil || res.Files[0].Err != nil || res.Entries == 0 {
		t.Fatalf("import: %v %+v", err, res.Files)
	}
	events := readEvents(t, f.openEvents("/api/sessions/"+res.Files[0].SessionID+"/events?after=0"), res.Entries)
	pi := "bad bytes: \ufffd\ufffd end"
	held := false
	for i, ev := range events {
		if !utf8.ValidString(ev.data) || !json.Valid([]byte(ev.data)) {
			t.Errorf("event %d: data %q is not UTF-8 JSON", i, ev.data)
		}
		held = held || strings.Contains(ev.data, pi)
	}
	if !held {
		t.Errorf("no event holds %q", pi)
	}
}

// TestEventsHead checks that HEAD on the event stream answers its headers
// and ends: a HEAD answer has no body, so a stream behind it was never
// read, its handler polled the log for as long as the connection lived,
// and the next request on that connection waited behind it for ever.
func TestEventsHead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	srv, err := New(f.store, Options{Token: token, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a guard against a hang only
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, "HEAD", "/api/sessions/s1/events", nil)
	req.Host = "127.0.0.1:7878"
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	if ctx.Err() != nil {
		t.Fatal("HEAD on the event stream ran until its request was cancelled; want it to end at once")
	}
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/event-stream" || w.Body.Len() != 0 {
		t.Errorf("HEAD = %d, Content-Type %q, body %q; want 200, text/event-stream, none", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
}

// TestEventsSessionMadeAgain checks that a stream whose session was
// deleted and made again under the same id between two polls says so and
// ends: the stream reads the log through the session it opened, which is
// gone, so the new session's entries never came and the stream stayed
// open, silent, for ever.
func TestEventsSessionMadeAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	srv, err := New(f.store, Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	two := `{"entries":[{"type":"custom","customType":"a"},{"type":"custom","customType":"b"}]}`
	f.call("POST", "/api/sessions", `{"id":"g"}`, 201)
	f.call("POST", "/api/sessions/g/entries", two, 201)
	ctx := context.Background()
	st, err := f.store.OpenSession(ctx, "g") // as the stream opened it
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f.call("DELETE", "/api/sessions/g", "", 200)
	f.call("POST", "/api/sessions", `{"id":"g"}`, 201)
	f.call("POST", "/api/sessions/g/entries", two, 201)
	f.call("POST", "/api/sessions/g/entries", two, 201)
	req := httptest.NewRequestWithContext(ctx, "GET", "/api/sessions/g/events", nil)
	log, err := srv.newEntries(req, st, 2)
	if !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("new entries after 2 = %d entries, error %v; want an error saying the session is gone", len(log), err)
	}
}

// TestEventsReconnect reads a stream while another writer appends, drops
// the connection every few events and reconnects with the Last-Event-ID
// of the last event read, as a browser does: every entry comes exactly
// once, in order.
func TestEventsReconnect(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	const n = 60
	done := make(chan error, 1)
	go func() {
		for i := range n {
			body := fmt.Sprintf(`{"entries":[{"type":"custom","customType":"c%d"}]}`, i)
			if r := f.do(request{method: "POST", path: "/api/sessions/s1/entries", body: body, bearer: token}); r.status != 201 {
				done <- fmt.Errorf("append %d: %d %s", i, r.status, r.body)
				return
			}
		}
		done <- nil
	}()
	// A guard against a hang only: a lost entry leaves the stream idle.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	last := "3" // the fixture's three entries
	for len(got) < n {
		req, _ := http.NewRequestWithContext(ctx, "GET", f.url+"/api/sessions/s1/events", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Last-Event-ID", last)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range readEvents(t, resp.Body, min(7, n-len(got))) {
			var entry struct{ CustomType string }
			json.Unmarshal([]byte(e.data), &entry)
			got = append(got, entry.CustomType)
			last = e.id
		}
		resp.Body.Close()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, c := range got {
		if c != fmt.Sprintf("c%d", i) {
			t.Fatalf("event %d is entry %q; want c%d (all: %v)", i, c, i, got)
		}
	}
}

// TestEventsStartBeyondLog checks that a stream asked to start after an
// entry the log does not have (?after= or Last-Event-ID past its end, a
// cursor of another session or of one deleted and made again) is a 400
// that says so: it was a stream that stayed silent, since the entries
// appended next had sequence numbers below the start. After the last
// entry is where a stream of what comes next starts, and is taken.
func TestEventsStartBeyondLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{}) // three entries
	for _, c := range []struct {
		query, lastEventID string
		status             int
	}{
		{"?after=4", "", 400},
		{"", "9", 400},
		{"?after=3", "", 200},
		{"", "3", 200},
	} {
		req, _ := http.NewRequest("GET", f.url+"/api/sessions/s1/events"+c.query, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if c.lastEventID != "" {
			req.Header.Set("Last-Event-ID", c.lastEventID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != c.status {
			t.Errorf("events%s (Last-Event-ID %q) = %d; want %d", c.query, c.lastEventID, resp.StatusCode, c.status)
		} else if c.status == 400 {
			body, _ := io.ReadAll(resp.Body)
			if !strings.Contains(string(body), "3 entries") {
				t.Errorf("events%s (Last-Event-ID %q) answered %s; want it to say the log has 3 entries", c.query, c.lastEventID, body)
			}
		}
		resp.Body.Close()
	}
}
