// Package server is `sessiontree serve`: an HTTP server over one session
// store that answers a JSON API and serves the web page of package web.
//
// It owns the HTTP side: the routes table, the OpenAPI document, the
// status of each error, the token and the request checks; no storage,
// no session logic (the store's and view's) and no page (package web's).
//
// # The API
//
// The routes live in one table (Server.routes); /api/openapi.json
// describes them, and tests hold the document to the table and to what
// every route answers (status, Content-Type, body). The body of every GET is exactly what the matching command
// prints with --json (compact): both call the same function of package
// view or store, so one contract serves scripts and the page. Writes
// take JSON bodies; their drafts are read as `sessiontree append` reads
// its lines (internal/cli.ParseDraft), and POST /api/sessions/{id}/entries
// stores them in one transaction, guarded by "ifLeaf". Errors are
// {"error": {"code", "message"}}, their status chosen from the library's
// sentinel errors with errors.Is ([StatusOf]). Each route lists the query
// parameters it takes; one it does not take, one given twice or given
// empty is a 400 naming it (checkQuery), as the command refuses an empty
// flag: an empty value never stands for the parameter left out.
//
// GET /api/sessions/{id}/events streams the session's new entries as
// server-sent events, also those other processes write: while a client
// listens the server reads the log after the last entry it sent, one
// indexed range scan, every [Options.PollInterval].
//
// # Security
//
// Every request to the API needs the token ([Options.Token]): as
// "Authorization: Bearer TOKEN", or, for reads only, as the token query
// parameter. Writes need the header, so that a URL (a link, a log line)
// never writes. No cookie authorizes anything: a browser sends a host's
// cookies to every port of it, so any other program listening on this
// machine would get one. The page takes the token from the ?token= of
// the URL it was opened with, keeps it in its tab and sends the header on
// every request, its event stream included (read with fetch, since
// EventSource cannot send a header); its files, the same for everyone,
// need no token. A request under /api/ that no route takes is a JSON 404.
//
// A request's body must all come within [Options.BodyTimeout] (a 408
// otherwise, [ErrTimeout]), and at most [Options.MaxStreams] event
// streams are served at once (the next is a 503, [ErrBusy]).
//
// Paged GETs (the session list, the entries) answer the body the command
// prints and put the next page's cursor in the X-Next-Cursor header
// ([NextCursorHeader]): the list's is absent on its last page; the
// entries' is there whenever the page is full, since the log grows, so a
// full page that ends the log has one, whose page is empty until more is
// appended. A search says in its X-Unsearched header ([UnsearchedHeader])
// how many entries not yet indexed it left unread, "0" when none: when
// another writer holds the database it reads the newest of them itself,
// up to a bound, and the hits among the others are missing. The
// Host header must name a loopback address, localhost, or one of
// [Options.Hosts] (against DNS rebinding); a request whose Origin is
// another site's (or another port's of this host) is refused unless it is
// [Options.CORSOrigin], and so is one without an Origin that the browser
// says another site or port sent (Sec-Fetch-Site). Responses
// carry X-Content-Type-Options: nosniff and are not cached.
//
// # Concurrency
//
// A [Server] is safe for concurrent use; it holds no state of its own
// beyond its options, a cache of the page's graphs and the slots of its
// event streams, and the store serializes writers.
package server
