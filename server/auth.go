package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// staleCookie is the cookie earlier versions of the page read with (an
// HMAC of the token). No cookie authorizes anything now: a browser sends
// a host's cookies to every port of it, so any other server on this
// machine that the browser visits got the cookie and could read every
// session with it. The page deletes one a browser still holds.
const staleCookie = "sessiontree_token"

// NewToken returns a random token: 32 bytes from crypto/rand, base64url.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// authorized checks the request's token and answers 401 or 403 when it
// does not pass: "Authorization: Bearer TOKEN", or for reads the token
// query parameter. No cookie counts (see [staleCookie]): the page sends
// the header on every request, its event stream included.
func (srv *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if auth := r.Header.Get("Authorization"); auth != "" {
		token, ok := strings.CutPrefix(auth, "Bearer ")
		if ok && srv.tokenMatches(token) {
			return true
		}
		writeErrorCode(w, http.StatusUnauthorized, CodeUnauthorized, "wrong token in the Authorization header")
		return false
	}
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	query := r.URL.Query().Get("token")
	switch {
	case query != "" && !read:
		writeErrorCode(w, http.StatusForbidden, CodeForbidden, "a write needs the token in an Authorization: Bearer header; a URL is not enough")
		return false
	case query != "" && srv.tokenMatches(query):
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="sessiontree"`)
	writeErrorCode(w, http.StatusUnauthorized, CodeUnauthorized,
		"missing or wrong token: send Authorization: Bearer TOKEN, or open the URL sessiontree serve printed")
	return false
}

// checkToken refuses a token that would not come back whole: a header
// trims surrounding space and cannot carry a control, the page cannot
// send a non-ASCII one in its Authorization header, and a quote, a comma,
// a semicolon or a backslash is syntax to HTTP's header lists.
func checkToken(token string) error {
	for i, r := range token {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`",;\`, r) {
			return fmt.Errorf("server: token: %q at byte %d: %w", r, i, ErrBadToken)
		}
	}
	return nil
}

func (srv *Server) tokenMatches(token string) bool {
	return secretMatches(token, srv.opts.Token)
}

// secretMatches compares a secret a request gave with ours in constant
// time (a different length shows, the bytes do not).
func secretMatches(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// hostAllowed reports whether a Host header names this server: localhost
// (or a name under it), a loopback address, or one of Options.Hosts. A
// web page on another name that resolves to a loopback address (DNS
// rebinding) is refused.
func (srv *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if IsLoopbackHost(host) {
		return true
	}
	for _, h := range srv.opts.Hosts {
		if strings.EqualFold(strings.Trim(h, "[]"), host) {
			return true
		}
	}
	return false
}

// IsLoopbackHost reports whether host (a name or an address, without a
// port) is localhost, a name under .localhost, or a loopback address.
func IsLoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// cors answers cross-origin requests: a request from Options.CORSOrigin
// gets the headers that let a browser read the answer (and a preflight
// is answered at once); a request from any other origin is refused. A
// request from this server's own origin passes, and one without an
// Origin (a script, curl) unless the browser says another site or
// another port of this host sent it ([otherSite]). It reports whether
// the request should go on.
func (srv *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" && otherSite(r) {
		writeErrorCode(w, http.StatusForbidden, CodeForbidden, fmt.Sprintf("a request a page of another site sent (Sec-Fetch-Site: %s) may not call this server", r.Header.Get("Sec-Fetch-Site")))
		return false
	}
	if origin == "" || sameOrigin(origin, r.Host) {
		return true
	}
	if srv.opts.CORSOrigin == "" || origin != srv.opts.CORSOrigin {
		writeErrorCode(w, http.StatusForbidden, CodeForbidden, fmt.Sprintf("origin %q may not call this server (see sessiontree serve --cors)", origin))
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	// Without it a browser hides from the page the paged GETs' cursor
	// and a search's count of what it left out.
	h.Set("Access-Control-Expose-Headers", NextCursorHeader+", "+UnsearchedHeader)
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
		// Last-Event-ID: a fetch-based event reader resumes with it.
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	return true
}

// otherSite reports whether a browser says that a page of another
// origin made the request without naming itself in an Origin header (a
// GET by an <img>, a <script>, a no-cors fetch): Sec-Fetch-Site
// "cross-site", or "same-site", which a page on another port of this
// host is. Following a link (a navigation) is not refused: it shows the
// page, with the browser's own origin after it.
func otherSite(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	return (site == "cross-site" || site == "same-site") && r.Header.Get("Sec-Fetch-Mode") != "navigate"
}

// sameOrigin reports whether origin is this server's own, the one the
// Host header names.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}

// isOrigin reports whether s is an origin as browsers send it in the
// Origin header: http or https, a host, an optional port, nothing more.
func isOrigin(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.User == nil && u.Path == "" && u.RawQuery == "" && u.Fragment == "" && s == u.Scheme+"://"+u.Host
}
