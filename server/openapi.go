package server

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3 document of the API, written by hand; a
// test holds it and the route table to each other.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3 document that describes the API.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

// openAPI answers the OpenAPI document.
func (srv *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPIDoc) // a failed write means the client has gone
	return nil
}
