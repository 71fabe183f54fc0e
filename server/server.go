package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/server/web"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

// Options configure a [Server]. Token is required; the zero value of the
// rest works.
type Options struct {
	// Token is the secret every request must carry (see the package
	// doc). [NewToken] makes a good one.
	Token string
	// CORSOrigin, when set, is the one other origin (as
	// "https://app.example") allowed to call the API from a browser;
	// otherwise requests from other origins are refused.
	CORSOrigin string
	// Hosts are the host names, besides localhost and loopback
	// addresses, that the Host header may name: the host of an address
	// given to listen on.
	Hosts []string
	// PollInterval is how often an event stream looks for new entries;
	// 0 means 250 ms.
	PollInterval time.Duration
	// MaxBodyBytes bounds a request body; 0 means 64 MiB.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request's body may take to come,
	// from when its headers have; 0 means [DefaultBodyTimeout].
	BodyTimeout time.Duration
	// MaxStreams bounds the event streams served at once; 0 means
	// [DefaultMaxStreams].
	MaxStreams int
	// ErrorLog receives the errors answered with status 500, which are
	// the server's own failures; nil means the standard logger.
	ErrorLog *log.Logger
}

// Errors of [New].
var (
	// ErrNoToken is returned when Options.Token is empty.
	ErrNoToken = errors.New("server: a token is required")
	// ErrBadOrigin is matched when Options.CORSOrigin is not an origin.
	ErrBadOrigin = errors.New("not an origin")
	// ErrBadToken is matched when Options.Token holds a character that
	// the Authorization header or the page cannot carry as it is (see
	// [checkToken]).
	ErrBadToken = errors.New("a token is printable ASCII without space, quote, comma, semicolon or backslash")
)

// Defaults of [Options].
const (
	// DefaultBodyTimeout is Options.BodyTimeout's default: 64 MiB, the
	// largest body, at about 1 MB/s.
	DefaultBodyTimeout = time.Minute
	// DefaultMaxStreams is Options.MaxStreams' default.
	DefaultMaxStreams = 64
)

// Server answers the API and serves the page over one store. Make one
// with [New]; it is an http.Handler.
type Server struct {
	store *store.Store
	opts  Options
	mux   *http.ServeMux
	// files serves the web page's files.
	files http.Handler
	// graphs keeps the page's graphs of the sessions looked at last.
	graphs graphCache
	// streams holds a token for each event stream being served.
	streams chan struct{}
}

// New returns a server over s.
func New(s *store.Store, opts Options) (*Server, error) {
	if opts.Token == "" {
		return nil, ErrNoToken
	}
	if err := checkToken(opts.Token); err != nil {
		return nil, err
	}
	if o := opts.CORSOrigin; o != "" && !isOrigin(o) {
		return nil, fmt.Errorf("server: CORS origin %q: want scheme://host[:port], as a browser sends it: %w", o, ErrBadOrigin)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 64 << 20
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.ErrorLog == nil {
		opts.ErrorLog = log.Default()
	}
	srv := &Server{store: s, opts: opts, mux: http.NewServeMux(), files: http.FileServerFS(web.Files()),
		streams: make(chan struct{}, opts.MaxStreams)}
	for _, rt := range srv.routes() {
		srv.mux.Handle(strings.TrimSpace(rt.method+" "+rt.pattern), srv.guard(rt))
	}
	return srv, nil
}

// route is one line of the route table.
type route struct {
	// method is "" for a route that takes every method: the catch-alls
	// (the page, no route), which take any query too.
	method, pattern string
	// params are the query parameters the route takes besides the
	// token; it refuses others ([checkQuery]).
	params []string
	// handle answers the request; an error it returns is answered as
	// JSON (see [StatusOf]).
	handle func(w http.ResponseWriter, r *http.Request) error
}

// routes is the route table: every route the server answers. The OpenAPI
// document lists the same /api routes (a test checks it).
func (srv *Server) routes() []route {
	return []route{
		{"GET", "/api/openapi.json", nil, srv.openAPI},
		{"GET", "/api/sessions", []string{"cwd", "name", "limit", "cursor"}, srv.listSessions},
		{"POST", "/api/sessions", nil, srv.createSession},
		{"GET", "/api/sessions/{id}", nil, srv.sessionInfo},
		{"DELETE", "/api/sessions/{id}", []string{"force"}, srv.deleteSession},
		{"GET", "/api/sessions/{id}/tree", nil, srv.tree},
		{"GET", "/api/sessions/{id}/branch", []string{"from", "full"}, srv.branch},
		{"GET", "/api/sessions/{id}/context", []string{"from", "projection"}, srv.context},
		{"GET", "/api/sessions/{id}/entries", []string{"after", "limit"}, srv.entries},
		{"POST", "/api/sessions/{id}/entries", nil, srv.appendEntries},
		{"GET", "/api/sessions/{id}/events", []string{"after"}, srv.events},
		{"POST", "/api/sessions/{id}/leaf", nil, srv.moveLeaf},
		{"POST", "/api/sessions/{id}/labels", nil, srv.setLabel},
		{"POST", "/api/sessions/{id}/name", nil, srv.setName},
		{"POST", "/api/sessions/{id}/edits", nil, srv.editContext},
		{"POST", "/api/sessions/{id}/fork", nil, srv.fork},
		{"GET", "/api/search", []string{"q", "cwd", "session", "limit", "literal"}, srv.search},
		{"GET", "/api/sessions/{id}/graph", []string{"offset", "limit", "expand", "focus"}, srv.graph},
		{"GET", "/api/sessions/{id}/entries/{entry}", nil, srv.entry},
		{"", "/api/", nil, srv.noRoute},
		{"", "/", nil, srv.page},
	}
}

// ServeHTTP answers one request.
func (srv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	// The first URL holds the token: no page may send it on as a referrer.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	defer srv.timeBody(w, r)()
	if !srv.hostAllowed(r.Host) {
		writeErrorCode(w, http.StatusForbidden, CodeForbidden, fmt.Sprintf("host %q is not served: use the address sessiontree serve printed", r.Host))
		return
	}
	if !srv.cors(w, r) {
		return
	}
	srv.mux.ServeHTTP(w, r)
}

// guard wraps a route with the token check and the error answer. The
// API's routes need the token; the page's files, the same for everyone
// and holding no session, do not (the browser fetches its scripts and
// style without the page's header, and no cookie carries the token).
func (srv *Server) guard(rt route) http.Handler {
	api := strings.HasPrefix(rt.pattern, "/api/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if api && !srv.authorized(w, r) {
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, srv.opts.MaxBodyBytes)
		}
		err := checkQuery(rt, r)
		if err == nil {
			tw, stop := timed(w, r)
			err = rt.handle(tw, r)
			stop()
		}
		if err != nil {
			if status, _ := StatusOf(err); status == http.StatusInternalServerError && !clientGone(r, err) {
				// The log goes to a terminal: one line, its controls shown.
				srv.opts.ErrorLog.Print(view.ErrorLine(fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err)))
			}
			writeError(w, r, err)
		}
	})
}

// respond renders a JSON body with fill and sends it with status. The
// body is rendered whole before anything is sent, so an error while
// rendering is still answered as an error.
func respond(w http.ResponseWriter, status int, fill func(w io.Writer) error) error {
	var buf bytes.Buffer
	if err := fill(&buf); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// A failed write means the client has gone: nobody is left to tell.
	_, _ = w.Write(buf.Bytes())
	return nil
}

// writeJSON answers v as JSON, as the command's --json writes it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	_ = respond(w, status, jsonOf(v))
}

// noRoute answers a request under /api/ that no route takes, as JSON.
func (srv *Server) noRoute(w http.ResponseWriter, r *http.Request) error {
	return fmt.Errorf("no API route %s %s (see /api/openapi.json): %w", r.Method, r.URL.Path, errNoRoute)
}

// errNoRoute is matched by the error of a request no route takes; it is
// answered 404.
var errNoRoute = fmt.Errorf("no such route: %w", sessiontree.ErrNotFound)

// page serves the web page's files.
func (srv *Server) page(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeErrorCode(w, http.StatusMethodNotAllowed, CodeBadRequest, "the page is read with GET")
		return nil
	}
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	if _, err := r.Cookie(staleCookie); err == nil {
		http.SetCookie(w, &http.Cookie{Name: staleCookie, Path: "/", MaxAge: -1})
	}
	srv.files.ServeHTTP(w, r)
	return nil
}

// contentSecurityPolicy lets the page load its own files only, so a
// script that slipped into session text could not run or send anything
// anywhere: no inline scripts, no other origins.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; " +
	"script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
