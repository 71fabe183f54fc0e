package server

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"time"
)

// shutdownGrace is how long [Serve] lets requests in progress finish
// once asked to stop; a variable for tests.
var shutdownGrace = 5 * time.Second

// idleTimeout is how long [Serve] keeps a connection open between
// requests; a variable for tests.
var idleTimeout = 2 * time.Minute

// Serve answers requests on ln with h until ctx is done, then shuts down:
// it stops accepting, ends event streams (their request contexts are
// cancelled) and waits up to 5 s for other requests to finish. It
// returns nil after a clean shutdown. A connection left idle between
// requests for 2 minutes is closed.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	base, stopStreams := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStreams()
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// Not ReadTimeout: a read deadline passing cancels the request's
		// context, which would end every event stream. A body has its
		// own deadline (Server.timeBody).
		IdleTimeout: idleTimeout,
		BaseContext: func(net.Listener) context.Context { return base },
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	stopStreams()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// URL returns the address a person opens: http://HOST:PORT/?token=TOKEN
// for the listener's address. A listener on every interface (0.0.0.0,
// ::) is given as 127.0.0.1, which reaches it from this machine.
func URL(addr net.Addr, token string) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		host, port = addr.String(), ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/", RawQuery: url.Values{"token": {token}}.Encode()}
	return u.String()
}

// ListenHosts checks an address to listen on and returns the host names
// the Host header may then name besides loopback ones ([Options.Hosts]),
// and whether the address reaches beyond this machine. An address on
// every interface allows any of this machine's addresses.
func ListenHosts(addr string) (hosts []string, public bool, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false, fmt.Errorf("address %q: %w", addr, err)
	}
	if IsLoopbackHost(host) {
		return nil, false, nil
	}
	ip := net.ParseIP(host)
	if host != "" && (ip == nil || !ip.IsUnspecified()) {
		return []string{host}, true, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, true, fmt.Errorf("list this machine's addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			hosts = append(hosts, n.IP.String())
		}
	}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	return hosts, true, nil
}

// OpenBrowser asks the desktop to open u in a browser (xdg-open, open,
// or the Windows URL handler) and returns without waiting for it. The
// browser is given a page in a file only this user may read, which sends
// it on to u, not u itself: u holds the token, and a command line is
// seen by every user of the machine (ps) as long as the browser it
// started runs. cleanup removes the file; call it once the server stops.
func OpenBrowser(u string) (cleanup func(), err error) {
	page, err := redirectPage(u)
	if err != nil {
		return nil, fmt.Errorf("open a browser: %w", err)
	}
	cleanup = func() { _ = os.Remove(page) }
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", page)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", page)
	default:
		cmd = exec.Command("xdg-open", page)
	}
	if err := cmd.Start(); err != nil {
		cleanup()
		return nil, fmt.Errorf("open a browser: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reap it; its exit status says nothing useful
	return cleanup, nil
}

// redirectTemplate is the page [OpenBrowser] opens: it sends the browser
// on to the URL at once, and links to it.
var redirectTemplate = template.Must(template.New("open").Parse(`<!DOCTYPE html>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0;url={{.}}">
<title>sessiontree</title>
<p><a href="{{.}}">Open sessiontree</a></p>
`))

// redirectPage writes the page sending a browser on to u into a new file
// of the temporary folder (mode 0600) and returns its path.
func redirectPage(u string) (path string, err error) {
	f, err := os.CreateTemp("", "sessiontree-open-*.html")
	if err != nil {
		return "", err
	}
	err = redirectTemplate.Execute(f, template.URL(u))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
