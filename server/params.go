package server

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// tokenParam is the query parameter that carries the token (see
// [Server.authorized]); every route takes it.
const tokenParam = "token"

// checkQuery refuses a query that the route rt does not take as it is:
// a parameter rt does not take (a typo, as ?sesion=, would otherwise be
// ignored and the answer widened), one given more than once (which one
// counts?) or given empty. An empty value is what a variable that was not
// set gives, and would otherwise mean the parameter left out, as the
// command refuses an empty flag: ?session= searching every session,
// ?after= streaming the log from its start. A query that is not
// URL-encoded (a bad %-escape, a ";") is refused too: the pairs around the
// fault would be dropped. Once the query passes, [param] reads it. The
// catch-alls (the page, whose URL is the browser's, and no route, 404
// whatever it asks) take any query.
func checkQuery(rt route, r *http.Request) error {
	if rt.method == "" {
		return nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return fmt.Errorf("query: %v: %w", err, ErrBadRequest)
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		switch vals := q[name]; {
		case name != tokenParam && !slices.Contains(rt.params, name):
			return fmt.Errorf("query parameter %q: %s %s takes %s: %w", name, rt.method, rt.pattern, paramList(rt.params), ErrBadRequest)
		case len(vals) > 1:
			return fmt.Errorf("query parameter %q: given %d times; give it once: %w", name, len(vals), ErrBadRequest)
		case vals[0] == "":
			return fmt.Errorf("query parameter %q: empty; leave it out for its default: %w", name, ErrBadRequest)
		}
	}
	return nil
}

// paramList names the query parameters a route takes, for an error.
func paramList(params []string) string {
	if len(params) == 0 {
		return "no query parameters"
	}
	return "only " + strings.Join(params, ", ")
}

// param returns the query parameter name and whether it is given: the
// one function the handlers read the query with. [checkQuery] has passed
// the query, so a parameter given is given once and not empty.
func param(r *http.Request, name string) (string, bool) {
	v := r.URL.Query().Get(name)
	return v, v != ""
}

// intParam reads a non-negative integer query parameter, def when absent.
func intParam(r *http.Request, name string, def int64) (int64, error) {
	s, ok := param(r, name)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a non-negative integer: %w", name, s, ErrBadRequest)
	}
	return n, nil
}

// boolParam reads a flag query parameter: "1" or "true" set it, "0" or
// "false" (or leaving it out) do not.
func boolParam(r *http.Request, name string) (bool, error) {
	s, ok := param(r, name)
	switch {
	case !ok || s == "0" || s == "false":
		return false, nil
	case s == "1" || s == "true":
		return true, nil
	}
	return false, fmt.Errorf("%s=%q: want 1 or 0: %w", name, s, ErrBadRequest)
}

// cwdParam reads the cwd filter, "" when absent, as [absCwd] takes it.
func cwdParam(r *http.Request) (string, error) {
	cwd, ok := param(r, "cwd")
	if !ok {
		return "", nil
	}
	return absCwd("cwd="+strconv.Quote(cwd), cwd)
}

// absCwd is the rule for a cwd the API is given, where names it: the cwd
// filter and the cwd a create or a fork records, so that a session is
// listed by the path it was created with. It takes an absolute path only:
// a relative one would be resolved against the server's working
// directory, which is not the caller's (the command resolves --cwd
// against the caller's). It is made a cwd as pi records it, as the
// command makes --cwd (store.AbsCwd).
func absCwd(where, cwd string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("%s: want an absolute path: the server's working directory is not the caller's: %w", where, ErrBadRequest)
	}
	abs, err := store.AbsCwd(cwd)
	if err != nil {
		return "", fmt.Errorf("%s: %w", where, ErrBadRequest)
	}
	return abs, nil
}

// sessionParam resolves the session filter ?session= (an id or unique
// prefix, as the routes' {id}), "" when absent.
func (srv *Server) sessionParam(r *http.Request) (string, error) {
	s, ok := param(r, "session")
	if !ok {
		return "", nil
	}
	if err := checkSessionID("session", s); err != nil {
		return "", err
	}
	return srv.store.Resolve(r.Context(), s)
}

// entryParam resolves an entry id (or unique prefix) query parameter of
// st, "" when absent.
func entryParam(ctx context.Context, r *http.Request, st sessiontree.Storage, name string) (string, error) {
	arg, ok := param(r, name)
	if !ok {
		return "", nil
	}
	return resolveEntry(ctx, st, arg, false)
}
