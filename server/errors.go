package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/store"
)

// ErrBadRequest is matched by errors in a request itself: a body that is
// not the JSON the route takes, a parameter out of range.
var ErrBadRequest = errors.New("bad request")

// ErrTimeout is matched by the error of a request whose body did not all
// come within Options.BodyTimeout; it is answered 408.
var ErrTimeout = errors.New("request timeout")

// ErrBusy is matched by the error of an event stream refused because
// Options.MaxStreams are open; it is answered 503.
var ErrBusy = errors.New("server busy")

// Error codes of the API's error bodies, one per status.
const (
	CodeBadRequest   = "bad_request"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeNotFound     = "not_found"
	CodeConflict     = "conflict"
	CodeLocked       = "locked"
	CodeTimeout      = "timeout"
	CodeUnavailable  = "unavailable"
	CodeInternal     = "internal"
)

// StatusOf returns the HTTP status and error code for err, told apart
// with errors.Is from the library's sentinels: a missing session or
// entry is 404, a stale ifLeaf or a used id 409, a session another
// writer holds 423, a malformed request, entry, query or edit 400 (a
// fork before an entry that is not a user message too, and an id prefix
// several sessions or entries start with), a read-only database 403, a
// body too slow 408, an event stream past the server's bound 503,
// anything else 500.
func StatusOf(err error) (int, string) {
	var ambiguous *cli.AmbiguousEntryError
	switch {
	case errors.As(err, &ambiguous): // an ErrNotFound, but as a session's
		return http.StatusBadRequest, CodeBadRequest
	case errors.Is(err, sessiontree.ErrNotFound):
		return http.StatusNotFound, CodeNotFound
	case errors.Is(err, sessiontree.ErrConflict):
		return http.StatusConflict, CodeConflict
	case errors.Is(err, sessiontree.ErrLocked):
		return http.StatusLocked, CodeLocked
	case errors.Is(err, sessiontree.ErrReadOnly):
		return http.StatusForbidden, CodeForbidden
	case errors.Is(err, ErrTimeout):
		return http.StatusRequestTimeout, CodeTimeout
	case errors.Is(err, ErrBusy):
		return http.StatusServiceUnavailable, CodeUnavailable
	case errors.Is(err, ErrBadRequest), errors.Is(err, sessiontree.ErrInvalidEntry),
		errors.Is(err, sessiontree.ErrEditRefused), errors.Is(err, store.ErrAmbiguous),
		errors.Is(err, store.ErrBadQuery), errors.Is(err, store.ErrBadCursor),
		errors.Is(err, store.ErrBadOptions), errors.Is(err, store.ErrNotUserMessage),
		errors.Is(err, cli.ErrBadArgument):
		return http.StatusBadRequest, CodeBadRequest
	}
	return http.StatusInternalServerError, CodeInternal
}

// errorBody is the JSON of an error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError answers err as JSON with its status. A request the client
// gave up on gets no answer: nobody reads it.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if clientGone(r, err) {
		return
	}
	status, code := StatusOf(err)
	writeErrorCode(w, status, code, err.Error())
}

// clientGone reports whether err is the request's own cancellation: the
// client left (a page navigating away), which is neither answered nor
// logged.
func clientGone(r *http.Request, err error) bool {
	return errors.Is(err, context.Canceled) && r.Context().Err() != nil
}

// writeErrorCode answers an error with the status and code given.
func writeErrorCode(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{errorDetail{Code: code, Message: msg}})
}

// errorJSON returns the error body of code and msg on one line.
func errorJSON(code, msg string) []byte {
	b, _ := json.Marshal(errorBody{errorDetail{Code: code, Message: msg}}) // strings always marshal
	return b
}
