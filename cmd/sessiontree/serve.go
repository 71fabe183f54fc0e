package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessiontree/sessiontree/server"
)

// tokenEnv is the environment variable that sets serve's token.
const tokenEnv = "SESSIONTREE_TOKEN"

// defaultServeAddr is where serve listens unless --addr says otherwise.
const defaultServeAddr = "127.0.0.1:7878"

func newServeCommand(a *app) *cobra.Command {
	var addr, token, cors string
	var open bool
	var bodyTimeout time.Duration
	var maxStreams int
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7878] [--open] [--token TOKEN] [--cors ORIGIN] [--body-timeout 1m] [--max-streams 64]",
		Short: "Serve a web page and a JSON API over the database",
		Long: `Serve the database over HTTP: a web page to browse, search and edit the
sessions, and the JSON API it uses, which any program can call (GET
/api/openapi.json describes it; every GET answers what the matching command
prints with --json). It prints the URL to open, with its token:
http://127.0.0.1:7878/?token=TOKEN. Stop it with Ctrl-C.

Every API request needs the token: scripts send "Authorization: Bearer
TOKEN" (a read may give ?token=TOKEN instead; writes must send the header),
and so does the page, which keeps the token in its tab, never in a cookie
(a browser sends a host's cookies to every port of it). The token
is random unless --token or $` + tokenEnv + ` sets it. serve listens on this
machine only (loopback) unless --addr names another address, which it warns
about: anyone who can reach that address and learns the token can read and
change every session. Pages of other sites, or of other ports of this host,
may not call the API unless --cors names their origin.

A request's body must all come within --body-timeout (408 otherwise), and
at most --max-streams event streams are served at once (the next is a 503
with Retry-After: 5).`,
		Example: `  sessiontree serve --open
  SESSIONTREE_TOKEN="$(cat ~/.sessiontree-token)" sessiontree serve --addr 127.0.0.1:0
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:7878/api/sessions`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			hosts, public, err := server.ListenHosts(addr)
			if err != nil {
				return usageError{err}
			}
			if bodyTimeout <= 0 {
				return usagef("--body-timeout %v: want a duration above 0", bodyTimeout)
			}
			if maxStreams < 1 {
				return usagef("--max-streams %d: want 1 or more", maxStreams)
			}
			if token == "" {
				token = a.env.Getenv(tokenEnv)
			}
			if token == "" {
				if token, err = server.NewToken(); err != nil {
					return err
				}
			}
			s, err := a.createStore(ctx)
			if err != nil {
				return err
			}
			h, err := server.New(s, server.Options{Token: token, CORSOrigin: cors, Hosts: hosts,
				BodyTimeout: bodyTimeout, MaxStreams: maxStreams})
			if errors.Is(err, server.ErrBadOrigin) {
				return usagef("--cors: %v", err)
			}
			if errors.Is(err, server.ErrBadToken) {
				return usagef("--token (or $"+tokenEnv+"): %v", err)
			}
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			if public {
				// The address as given (Go shows 0.0.0.0 as [::]), with the port it got.
				host, _, _ := net.SplitHostPort(addr)
				_, port, _ := net.SplitHostPort(ln.Addr().String())
				fmt.Fprintf(a.stderr, "warning: listening on %s, which other machines may reach: anyone with the token can read and change every session\n",
					net.JoinHostPort(host, port))
			}
			u := server.URL(ln.Addr(), token)
			fmt.Fprintf(a.stdout, "serving %s at %s\n", s.Path(), u)
			if open {
				cleanup, err := server.OpenBrowser(u)
				if err != nil {
					fmt.Fprintf(a.stderr, "warning: %v; open the URL yourself\n", err)
				} else {
					defer cleanup()
				}
			}
			return server.Serve(ctx, ln, h)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", defaultServeAddr, "address to listen on (another than loopback lets other machines in)")
	f.BoolVar(&open, "open", false, "open the page in a browser")
	f.Var((*nonEmpty)(&token), "token", "the token requests must carry (default $"+tokenEnv+", else a random one)")
	f.Var((*nonEmpty)(&cors), "cors", "let pages of this origin (as https://app.example) call the API")
	f.DurationVar(&bodyTimeout, "body-timeout", server.DefaultBodyTimeout, "how long a request's body may take to come")
	f.IntVar(&maxStreams, "max-streams", server.DefaultMaxStreams, "how many event streams to serve at once")
	return cmd
}
