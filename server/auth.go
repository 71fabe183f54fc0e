package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// CookieName is the cookie that lets the page read: it holds a value
// made from the token (see [cookieValue]), not the token itself.
const CookieName = "sessiontree_token"

// NewToken returns a random token: 32 bytes from crypto/rand, base64url.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// authorized checks the request's token and answers 401 or 403 when it
// does not pass. Writes need the Authorization header; reads may use the
// cookie or the token query parameter instead, which sets the cookie to
// [cookieValue] of the token.
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
	cookieOK := false
	if c, err := r.Cookie(CookieName); err == nil {
		cookieOK = secretMatches(c.Value, srv.cookie)
	}
	switch {
	case !read && (cookieOK || query != ""):
		writeErrorCode(w, http.StatusForbidden, CodeForbidden, "a write needs the token in an Authorization: Bearer header; a cookie or a URL is not enough")
		return false
	case read && query != "" && srv.tokenMatches(query):
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: srv.cookie, Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode})
		return true
	case read && query == "" && cookieOK:
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="sessiontree"`)
	writeErrorCode(w, http.StatusUnauthorized, CodeUnauthorized,
		"missing or wrong token: send Authorization: Bearer TOKEN, or open the URL sessiontree serve printed")
	return false
}

// checkToken refuses a token that would not come back whole: a cookie
// drops a quote, a comma, a semicolon, a backslash, a control or a
// non-ASCII character (and the page's files, read with the cookie only,
// were then refused), a header trims surrounding space, and the page
// cannot send a non-ASCII one in its Authorization header.
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

// cookieValue is what the page's cookie holds for token: an HMAC of it,
// which [Server.authorized] takes for reads alone and which is not a
// token. A browser sends a host's cookies to every port of it (cookies
// ignore ports), so another server on this machine that the browser
// visits gets the cookie; holding the token, it could then write as the
// Authorization header. The token itself stays in the page's
// sessionStorage, which is kept per origin, port included.
func cookieValue(token string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("sessiontree read cookie"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
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
// request without an Origin (a script, curl) or from this server's own
// origin passes. It reports whether the request should go on.
func (srv *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
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
	// Without it a browser hides the paged GETs' cursor from the page.
	h.Set("Access-Control-Expose-Headers", NextCursorHeader)
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
