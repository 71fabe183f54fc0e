package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

// NextCursorHeader is the response header of a paged GET (the session
// list, the entries) that holds the cursor of the next page; it is absent
// on the last page. The body stays what the command prints.
const NextCursorHeader = "X-Next-Cursor"

// UnsearchedHeader is the search's response header that counts the
// entries not yet in the index that the search left unread
// (store.SearchResult.Unsearched, which the command notes on stderr):
// "0" when every entry was searched; otherwise hits among those entries
// are missing, and the same search once the index has caught up may find
// more. The body stays what the command prints.
const UnsearchedHeader = "X-Unsearched"

// compact is how the API writes JSON: as the command does into a pipe.
var compact = view.JSONOptions{}

// open opens the session of the request's {id}: a full id or a unique
// prefix, as the command takes it. The caller closes it.
func (srv *Server) open(r *http.Request) (sessiontree.DatabaseSession, error) {
	id := r.PathValue("id")
	if err := checkSessionID("session id", id); err != nil {
		return nil, err
	}
	return srv.store.OpenSession(r.Context(), id)
}

// checkSessionID refuses an id (or prefix) that the routes' {id} cannot
// name: empty, with white space or a control character, one the command
// would take for a file path, or a dot segment ("." or ".."), which a
// URL's resolution removes (fetch and curl send /api/sessions/.. as
// /api/); what says where it was given.
func checkSessionID(what, id string) error {
	if _, err := cli.ParseSessionArg(id); err != nil || cli.IsSessionFile(id) || dotSegment(id) {
		return fmt.Errorf(`%s %q: want an id without white space, control characters, "/" or "\", not ending in .jsonl, not "." or "..": %w`, what, id, ErrBadRequest)
	}
	return nil
}

// dotSegment reports whether id is "." or "..", which a route's {id} or
// {entry} cannot be: a URL's resolution removes such a path segment.
func dotSegment(id string) bool { return id == "." || id == ".." }

// checkNewID refuses the id asked for a new session when the routes could
// not name the session afterwards; "" (a fresh id) passes.
func checkNewID(id string) error {
	if id == "" {
		return nil
	}
	return checkSessionID(`body: "id"`, id)
}

// withSession runs fn on the request's session, closing it after.
func (srv *Server) withSession(r *http.Request, fn func(st sessiontree.DatabaseSession) error) error {
	st, err := srv.open(r)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

// resolveEntry resolves an entry id or unique prefix as the command's
// ENTRY arguments are; allowRoot takes "root" for before the first entry.
func resolveEntry(ctx context.Context, st sessiontree.Storage, arg string, allowRoot bool) (string, error) {
	id, err := cli.ParseEntryArg(arg, allowRoot)
	if err != nil {
		return "", err
	}
	return cli.ResolveEntry(ctx, st, id)
}

// listSessions is `ls --json`, one page: ?cwd=&name=&limit=&cursor=.
func (srv *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit", store.DefaultListLimit)
	if err != nil {
		return err
	}
	cwd, err := cwdParam(r)
	if err != nil {
		return err
	}
	name, _ := param(r, "name")
	cursor, _ := param(r, "cursor")
	opts := store.ListOptions{Cwd: cwd, Name: name, After: cursor, Limit: int(min(limit, store.MaxListLimit))}
	if limit == 0 {
		opts.Limit = store.MaxListLimit
	}
	page, err := srv.store.List(r.Context(), opts)
	if err != nil {
		return err
	}
	if page.Next != "" {
		w.Header().Set(NextCursorHeader, page.Next)
	}
	return respond(w, http.StatusOK, jsonOf(store.ListRows(page.Sessions)))
}

// sessionInfo is `info --json`.
func (srv *Server) sessionInfo(w http.ResponseWriter, r *http.Request) error {
	return srv.withSession(r, func(st sessiontree.DatabaseSession) error {
		return srv.writeInfo(w, r.Context(), http.StatusOK, st)
	})
}

// writeInfo answers the info of st.
func (srv *Server) writeInfo(w http.ResponseWriter, ctx context.Context, status int, st sessiontree.Storage) error {
	info, err := view.LoadInfo(ctx, st)
	if err != nil {
		return err
	}
	return respond(w, status, jsonOf(info))
}

// tree is `tree --json`.
func (srv *Server) tree(w http.ResponseWriter, r *http.Request) error {
	return srv.withSession(r, func(st sessiontree.DatabaseSession) error {
		return respond(w, http.StatusOK, func(w io.Writer) error {
			return view.WriteTreeJSON(r.Context(), w, st, compact)
		})
	})
}

// branch is `branch --json [--from ID] [--full]`: ?from=&full=1.
func (srv *Server) branch(w http.ResponseWriter, r *http.Request) error {
	return srv.fromEntry(w, r, "full", func(ctx context.Context, st sessiontree.Storage, from string, full bool) (writeFunc, error) {
		path, err := view.LoadBranch(ctx, st, from, full)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return view.WriteEntriesJSON(w, path, compact) }, nil
	})
}

// context is `context --json [--from ID] [--projection]`:
// ?from=&projection=1.
func (srv *Server) context(w http.ResponseWriter, r *http.Request) error {
	return srv.fromEntry(w, r, "projection", func(ctx context.Context, st sessiontree.Storage, from string, projection bool) (writeFunc, error) {
		c, err := view.LoadContextJSON(ctx, st, from, projection)
		return jsonOf(c), err
	})
}

// writeFunc writes a response body.
type writeFunc = func(w io.Writer) error

// jsonOf returns the writeFunc of v as the command's --json writes it.
func jsonOf(v any) writeFunc {
	return func(w io.Writer) error { return view.WriteJSON(w, v, compact) }
}

// fromEntry answers a GET that reads the session at the entry ?from=
// (the leaf when absent) with one flag parameter: load returns what
// writes the body.
func (srv *Server) fromEntry(w http.ResponseWriter, r *http.Request, flag string,
	load func(ctx context.Context, st sessiontree.Storage, from string, set bool) (writeFunc, error)) error {
	set, err := boolParam(r, flag)
	if err != nil {
		return err
	}
	return srv.withSession(r, func(st sessiontree.DatabaseSession) error {
		from, err := entryParam(r.Context(), r, st, "from")
		if err != nil {
			return err
		}
		write, err := load(r.Context(), st, from, set)
		if err != nil {
			return err
		}
		return respond(w, http.StatusOK, write)
	})
}

// Page sizes of GET /api/sessions/{id}/entries.
const (
	DefaultEntriesLimit = 1000
	MaxEntriesLimit     = 10000
)

// entries is `log --json --after SEQ --limit N`, the append log a page at
// a time: up to N entries after the SEQth (1-based, in append order). The next page's
// "after" is in the X-Next-Cursor header, when there may be one.
func (srv *Server) entries(w http.ResponseWriter, r *http.Request) error {
	after, err := intParam(r, "after", 0)
	if err != nil {
		return err
	}
	limit, err := intParam(r, "limit", DefaultEntriesLimit)
	if err != nil {
		return err
	}
	if limit == 0 || limit > MaxEntriesLimit {
		limit = MaxEntriesLimit
	}
	return srv.withSession(r, func(st sessiontree.DatabaseSession) error {
		log, err := st.Log(r.Context(), after, int(limit))
		if err != nil {
			return err
		}
		if len(log) == int(limit) {
			w.Header().Set(NextCursorHeader, strconv.FormatInt(log[len(log)-1].Seq, 10))
		}
		return respond(w, http.StatusOK, func(w io.Writer) error { return view.WriteEntriesJSON(w, log, compact) })
	})
}

// search is `search --json`: ?q=&cwd=&session=&limit=&literal=1.
func (srv *Server) search(w http.ResponseWriter, r *http.Request) error {
	query, ok := param(r, "q")
	if !ok {
		return fmt.Errorf("query parameter \"q\": a query is required: %w", ErrBadRequest)
	}
	limit, err := intParam(r, "limit", store.DefaultSearchLimit)
	if err != nil {
		return err
	}
	literal, err := boolParam(r, "literal")
	if err != nil {
		return err
	}
	cwd, err := cwdParam(r)
	if err != nil {
		return err
	}
	opts := store.SearchOptions{Cwd: cwd, Limit: int(min(limit, store.MaxSearchLimit)), Literal: literal}
	if opts.SessionID, err = srv.sessionParam(r); err != nil {
		return err
	}
	res, err := srv.store.Search(r.Context(), query, opts)
	if err != nil {
		return err
	}
	w.Header().Set(UnsearchedHeader, strconv.FormatInt(res.Unsearched, 10))
	return respond(w, http.StatusOK, jsonOf(res.HitList()))
}
