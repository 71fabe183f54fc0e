package server

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSlowBody checks that a body sent slowly (slowloris) is cut off at
// Options.BodyTimeout with a 408 that says so, and nothing is written: a
// request's body had no deadline, so a client with the token that sent a
// byte now and then, or stopped, held its handler and connection for as
// long as it liked; and one without the token as well, since the server
// reads the rest of a short body before it answers the 401.
func TestSlowBody(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{BodyTimeout: 300 * time.Millisecond})
	before := f.logIDs()
	body := `{"entries":[{"type":"message","message":{"role":"user","content":"slow"}}]}`
	for _, c := range []struct {
		name, auth string
		chunked    bool
		want       int
	}{
		{"token", "Authorization: Bearer " + token + "\r\n", false, http.StatusRequestTimeout},
		{"token, chunked", "Authorization: Bearer " + token + "\r\n", true, http.StatusRequestTimeout},
		{"no token", "", false, http.StatusUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, took := slowPost(t, f, "/api/sessions/s1/entries", c.auth, body, c.chunked)
			if resp.StatusCode != c.want || !resp.Close {
				t.Errorf("slow body = %d, close %v; want %d and the connection closed", resp.StatusCode, resp.Close, c.want)
			}
			b, _ := io.ReadAll(resp.Body)
			r := response{status: resp.StatusCode, header: resp.Header, body: string(b)}
			if code := errorCode(t, r); c.want == http.StatusRequestTimeout && (code != CodeTimeout || !strings.Contains(r.body, "300ms")) {
				t.Errorf("slow body answered %s; want code %s naming the 300ms", r.body, CodeTimeout)
			}
			for _, bad := range loadSpec(t).checkAnswer("POST", "/api/sessions/s1/entries", r) {
				t.Error(bad)
			}
			t.Logf("answered %d after %v", resp.StatusCode, took.Round(time.Millisecond))
		})
	}
	if after := f.logIDs(); !slices.Equal(after, before) {
		t.Errorf("a body cut off changed the log")
	}
}

// slowPost sends a POST of body to path whose body comes a byte every
// 50 ms and stops halfway, and returns the answer and how long it took;
// the test fails if none comes within 10 s.
func slowPost(t *testing.T, f *fixture, path, auth, body string, chunked bool) (*http.Response, time.Duration) {
	t.Helper()
	start := time.Now()
	conn := startSlowPost(t, f, path, auth, body, chunked)
	// Not a bound on the server's time: only how long to wait before
	// failing the test.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, time.Since(start)
}

// startSlowPost sends the headers of a POST of body to path and then its
// body, a byte every 50 ms, stopping halfway; the test's end closes the
// connection.
func startSlowPost(t *testing.T, f *fixture, path, auth, body string, chunked bool) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	length := fmt.Sprintf("Content-Length: %d\r\n", len(body))
	if chunked {
		length = "Transfer-Encoding: chunked\r\n"
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/json\r\n%s\r\n", path, auth, length)
	go func() {
		for i := range len(body) / 2 {
			chunk := body[i : i+1]
			if chunked {
				chunk = "1\r\n" + chunk + "\r\n"
			}
			if _, err := io.WriteString(conn, chunk); err != nil {
				return // the server closed the connection
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return conn
}

// TestStreamLimit checks that the server serves at most
// Options.MaxStreams event streams at once: the next is refused with a
// 503 in the error shape (Retry-After set), and a stream's slot is free
// again once its client goes, its handler ended. Without the bound a
// token holder opened as many streams as it liked, each a handler
// polling the store.
func TestStreamLimit(t *testing.T) {
	f := newFixture(t, Options{MaxStreams: 2})
	path := "/api/sessions/s1/events"
	a, b := openStream(t, f, path), openStream(t, f, path)
	r := refusedStream(t, f, path)
	if code := errorCode(t, r); code != CodeUnavailable || !strings.Contains(r.body, "2 event streams") || r.header.Get("Retry-After") == "" {
		t.Errorf("the third stream = %s, Retry-After %q; want code %s naming the bound of 2, and Retry-After", r.body, r.header.Get("Retry-After"), CodeUnavailable)
	}
	for _, bad := range loadSpec(t).checkAnswer("GET", path, r) {
		t.Error(bad)
	}
	waitHandlers(t, "events", func(_, running int) bool { return running == 2 }, "two streams")
	a.Body.Close() // the client goes
	waitHandlers(t, "events", func(_, running int) bool { return running == 1 }, "the closed stream's handler to end")
	c := openStream(t, f, path) // its slot is free again
	b.Body.Close()
	c.Body.Close()
	waitHandlers(t, "events", func(_, running int) bool { return running == 0 }, "every stream's handler to end")
	openStream(t, f, path).Body.Close()
}

// refusedStream opens an event stream, which must be refused with 503,
// and returns the answer.
func refusedStream(t *testing.T, f *fixture, path string) response {
	t.Helper()
	resp := getStream(t, f, path, http.StatusServiceUnavailable)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

// openStream opens an event stream and reads up to its first comment,
// failing the test unless it is a 200.
func openStream(t *testing.T, f *fixture, path string) *http.Response {
	t.Helper()
	resp := getStream(t, f, path, http.StatusOK)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("the stream began %q, %v; want a comment", line, err)
	}
	return resp
}

// getStream GETs path with the token, failing the test unless the
// answer's status is want; the test's end closes the answer (else the
// server's Close waits for a stream).
func getStream(t *testing.T, f *fixture, path string, want int) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", f.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != want {
		t.Fatalf("GET %s = %d; want %d", path, resp.StatusCode, want)
	}
	return resp
}

// TestTruncatedBody checks that a body that ends before its length (the
// client closed its side of the connection) is a 400 saying so, not a
// 500 "read body: unexpected EOF" logged as the server's own failure, and
// that nothing is written.
func TestTruncatedBody(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{ErrorLog: log.New(failLog{t}, "", 0)})
	before := f.logIDs()
	body := `{"entries":[{"type":"message","message":{"role":"user","content":"cut"}}]}`
	for _, chunked := range []bool{false, true} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		length, half := fmt.Sprintf("Content-Length: %d\r\n", len(body)), body[:len(body)/2]
		if chunked {
			length, half = "Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s\r\n", len(half), half)
		}
		fmt.Fprintf(conn, "POST /api/sessions/s1/entries HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n%s\r\n%s", token, length, half)
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("chunked %v: no answer to a cut body: %v", chunked, err)
		}
		b, _ := io.ReadAll(resp.Body)
		r := response{status: resp.StatusCode, header: resp.Header, body: string(b)}
		if r.status != http.StatusBadRequest || errorCode(t, r) != CodeBadRequest || !strings.Contains(r.body, "ended") {
			t.Errorf("chunked %v: a cut body = %d %s; want 400 saying it ended early", chunked, r.status, r.body)
		}
	}
	if after := f.logIDs(); !slices.Equal(after, before) {
		t.Errorf("a cut body changed the log")
	}
}

// failLog fails the test on every line logged: the errors the server
// logs are its own failures.
type failLog struct{ t *testing.T }

func (l failLog) Write(p []byte) (int, error) {
	l.t.Errorf("logged as the server's failure: %q", p)
	return len(p), nil
}

// TestServeShutdownSlowBody checks that Serve shuts down cleanly, and at
// once, while a client is sending a body slowly: the handler waited in
// its read of the body, which the request's end did not stop, so Serve
// waited out its grace and returned "context deadline exceeded".
func TestServeShutdownSlowBody(t *testing.T) {
	f := newFixture(t, Options{})
	ln, cancel, served := startServe(t, f)
	f.url = "http://" + ln.Addr().String()
	startSlowPost(t, f, "/api/sessions/s1/entries", "Authorization: Bearer "+token+"\r\n", strings.Repeat(" ", 1000)+"{}", false)
	waitHandlers(t, "appendEntries", func(_, running int) bool { return running == 1 }, "the handler reading the body")
	start := time.Now()
	stopServe(t, cancel, served)
	if d := time.Since(start); d >= shutdownGrace {
		t.Errorf("Serve waited %v for the body; want it stopped at once", d)
	}
	waitHandlers(t, "appendEntries", func(_, running int) bool { return running == 0 }, "the handler to end")
}
