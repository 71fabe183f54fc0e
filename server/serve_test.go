package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIsLoopbackHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost": true, "app.localhost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"0.0.0.0": false, "evil.example": false, "localhost.evil.example": false, "10.0.0.1": false, "": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v; want %v", host, got, want)
		}
	}
}

func TestListenHosts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr      string
		hosts     []string
		public    bool
		wantError bool
	}{
		{"127.0.0.1:7878", nil, false, false},
		{"localhost:0", nil, false, false},
		{"[::1]:7878", nil, false, false},
		{"192.0.2.7:7878", []string{"192.0.2.7"}, true, false},
		{"box.lan:80", []string{"box.lan"}, true, false},
		{"127.0.0.1", nil, false, true},
	} {
		hosts, public, err := ListenHosts(c.addr)
		if (err != nil) != c.wantError || public != c.public || !slices.Equal(hosts, c.hosts) {
			t.Errorf("ListenHosts(%q) = %q, %v, %v; want %q, %v, error %v", c.addr, hosts, public, err, c.hosts, c.public, c.wantError)
		}
	}
	// Every interface: public, and this machine's own addresses allowed.
	hosts, public, err := ListenHosts(":7878")
	if err != nil || !public || !slices.Contains(hosts, "127.0.0.1") {
		t.Errorf("ListenHosts(:7878) = %q, %v, %v; want public with this machine's addresses", hosts, public, err)
	}
}

func TestURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1:7878": "http://127.0.0.1:7878/?token=a%2Bb",
		"[::1]:80":       "http://[::1]:80/?token=a%2Bb",
		"0.0.0.0:7878":   "http://127.0.0.1:7878/?token=a%2Bb",
	} {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := URL(tcp, "a+b"); got != want {
			t.Errorf("URL(%s) = %q; want %q", addr, got, want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	if _, err := New(nil, Options{}); !errors.Is(err, ErrNoToken) {
		t.Errorf("New without a token: %v; want ErrNoToken", err)
	}
	for _, o := range []string{"app.example", "https://app.example/", "https://app.example/x", "ftp://app.example"} {
		if _, err := New(nil, Options{Token: "x", CORSOrigin: o}); !errors.Is(err, ErrBadOrigin) {
			t.Errorf("New with CORS origin %q: %v; want ErrBadOrigin", o, err)
		}
	}
	a, b := NewToken()
	c, d := NewToken()
	if b != nil || d != nil || len(a) < 40 || a == c {
		t.Errorf("NewToken = %q, %v and %q, %v; want two different long tokens", a, b, c, d)
	}
}

// TestServeShutdown checks that Serve returns nil once its context is
// done, ending an open event stream rather than waiting for it.
func TestServeShutdown(t *testing.T) {
	ln, cancel, served := startServe(t, newFixture(t, Options{}))
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/sessions/s1/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	if n, err := resp.Body.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), ":") {
		t.Fatalf("stream opened with %q, %v", buf[:n], err)
	}
	start := time.Now()
	stopServe(t, cancel, served)
	if d := time.Since(start); d >= shutdownGrace {
		t.Errorf("Serve waited %v for the event stream; want it ended at once", d)
	}
}

// TestTokenCharacters checks that New refuses a token that the header
// or the page cannot carry as it is (a space, a quote, a comma, a
// semicolon, a backslash, a control or non-ASCII character), and that a
// token it takes authorizes as the header and as the query parameter.
func TestTokenCharacters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, tok := range []string{"a;b", `a"b`, `a\b`, "a,b", "a b", " ab", "a\tb", "é-token", "a\x7fb"} {
		if _, err := New(f.store, Options{Token: tok}); !errors.Is(err, ErrBadToken) {
			t.Errorf("New with token %q: %v; want ErrBadToken", tok, err)
		}
	}
	for _, tok := range []string{"abc", "A-z_0.9~!#$%&'()*+/:<=>?@[]^`{|}"} {
		h, err := New(f.store, Options{Token: tok})
		if err != nil {
			t.Errorf("New with token %q: %v", tok, err)
			continue
		}
		ts := httptest.NewServer(h)
		header, _ := http.NewRequest("GET", ts.URL+"/api/sessions", nil)
		header.Header.Set("Authorization", "Bearer "+tok)
		query, _ := http.NewRequest("GET", ts.URL+"/api/sessions?"+url.Values{"token": {tok}}.Encode(), nil)
		for _, req := range []*http.Request{header, query} {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("token %q: GET %s = %d; want 200", tok, req.URL, resp.StatusCode)
			}
		}
		ts.Close()
	}
}

// TestServeClosesIdleConnection checks that Serve closes a kept-alive
// connection left idle for idleTimeout: without it anyone who can reach
// the address, token or not, kept a connection (a socket and a
// goroutine) open as long as they liked after one request answered 401,
// and could so hold as many as the process may open files.
func TestServeClosesIdleConnection(t *testing.T) {
	defer func(d time.Duration) { idleTimeout = d }(idleTimeout)
	idleTimeout = 100 * time.Millisecond
	f := newFixture(t, Options{})
	ln, cancel, served := startServe(t, f)
	defer stopServe(t, cancel, served)
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Close {
		t.Fatalf("GET without a token = %d, close %v; want 401 and the connection kept", resp.StatusCode, resp.Close)
	}
	// Not a bound on the server's time: only how long to wait before
	// failing the test.
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("read of the idle connection = %v; want EOF, closed by the server", err)
	}
}

// TestOpenBrowserHidesToken checks that the browser's command line does
// not hold the URL's token, which every user of the machine can read
// (ps, /proc/PID/cmdline) while the browser runs: it is given a file of
// this user's alone that sends it on to the URL.
func TestOpenBrowserHidesToken(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fake browser is an xdg-open shell script")
	}
	bin, out := t.TempDir(), filepath.Join(t.TempDir(), "args")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + out + ".tmp && /bin/mv " + out + ".tmp " + out + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	const secret = "s3cretT0ken"
	u := "http://127.0.0.1:7878/?token=" + secret
	cleanup, err := OpenBrowser(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup) // also when the test fails; a second call does nothing
	var args []byte
	for range 500 { // the script runs on its own; at most 10 s
		if args, err = os.ReadFile(out); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the browser was not started: %v", err)
	}
	if strings.Contains(string(args), secret) {
		t.Fatalf("the browser's command line %q holds the token", args)
	}
	page := strings.TrimSpace(string(args))
	info, err := os.Stat(page)
	if err != nil {
		t.Fatalf("the browser was given %q, not a file: %v", page, err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		t.Errorf("%s has mode %v: others may read it", page, info.Mode().Perm())
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), `url=`+u+`"`) || !strings.Contains(string(b), `href="`+u+`"`) {
		t.Errorf("%s = %q, %v; want a page sending the browser on to %s", page, b, err, u)
	}
	cleanup()
	if _, err := os.Stat(page); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after cleanup: %v; want it removed", page, err)
	}
}
