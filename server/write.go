package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/cli"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/view"
)

// decodeBody reads the request's JSON body into v, refusing unknown
// fields and trailing data. An empty body leaves v as it is.
func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return fmt.Errorf("body: longer than %d bytes: %w", tooBig.Limit, ErrBadRequest)
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The client's, not the server's: it closed before the end.
		return fmt.Errorf("body: ended after %d bytes, before its end came: %w", len(body), ErrBadRequest)
	case err != nil:
		return fmt.Errorf("read body: %w", err)
	case len(bytes.TrimSpace(body)) == 0:
		return nil
	case !utf8.Valid(body):
		return fmt.Errorf("body: not UTF-8, as JSON must be (byte %d): %w", firstInvalid(body), ErrBadRequest)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: %v: %w", err, ErrBadRequest)
	}
	// Decoder.More says nothing of a stray '}' or ']': look at the rest.
	if rest := bytes.TrimSpace(body[dec.InputOffset():]); len(rest) > 0 {
		return fmt.Errorf("body: data after the JSON value (%d bytes): %w", len(rest), ErrBadRequest)
	}
	return nil
}

// firstInvalid returns the offset of the first byte of b that does not
// start a valid UTF-8 character.
func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// withBody decodes the request's body into a T and runs fn with it on
// the request's session.
func withBody[T any](srv *Server, r *http.Request, fn func(req T, st sessiontree.DatabaseSession) error) error {
	var req T
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	return srv.withSession(r, func(st sessiontree.DatabaseSession) error { return fn(req, st) })
}

// createRequest is the body of POST /api/sessions.
type createRequest struct {
	ID            string          `json:"id"`
	Cwd           string          `json:"cwd"`
	ParentSession string          `json:"parentSession"`
	Metadata      json.RawMessage `json:"metadata"`
	Name          string          `json:"name"`
}

// createSession makes an empty session and answers its info (201).
func (srv *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	var req createRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := checkNewID(req.ID); err != nil {
		return err
	}
	if err := store.CheckNewName(req.Name); err != nil {
		return fmt.Errorf(`body: "name" %q: %w`, req.Name, err)
	}
	cwd, err := bodyCwd(req.Cwd)
	if err != nil {
		return err
	}
	st, err := srv.store.Create(r.Context(), store.CreateOptions{ID: req.ID, Cwd: cwd,
		ParentSession: req.ParentSession, Metadata: req.Metadata, Name: req.Name})
	if err != nil {
		return err
	}
	defer st.Close()
	return srv.writeInfo(w, r.Context(), http.StatusCreated, st)
}

// bodyCwd reads the "cwd" member of a create's or a fork's body as
// [absCwd] takes a cwd; "" stays "" (none given).
func bodyCwd(cwd string) (string, error) {
	if cwd == "" {
		return "", nil
	}
	return absCwd(`body: "cwd" `+strconv.Quote(cwd), cwd)
}

// deleteSession is `rm`: it answers {"deleted": 1}. It takes a full id
// only, so that a repeated DELETE never deletes another session that the
// id, as a prefix, names once the first is gone. A session another
// writer holds a live claim on is 423, unless ?force=1 (`rm --force`).
func (srv *Server) deleteSession(w http.ResponseWriter, r *http.Request) error {
	var opts sessiontree.DeleteOptions
	force, err := boolParam(r, "force")
	if err != nil {
		return err
	}
	opts.Force = force
	st, err := srv.open(r)
	if err != nil {
		return err
	}
	id := st.ID()
	st.Close()
	if given := r.PathValue("id"); id != given {
		return fmt.Errorf("session %s: DELETE takes a full id, and %q is only a prefix of %s: %w", given, given, id, sessiontree.ErrNotFound)
	}
	n, err := srv.store.DeleteWith(r.Context(), opts, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int{"deleted": n})
	return nil
}

// appendRequest is the body of POST /api/sessions/{id}/entries.
type appendRequest struct {
	// Entries are drafts as `sessiontree append` reads its lines.
	Entries []json.RawMessage `json:"entries"`
	// IfLeaf, when present, guards the write: "" or null for a leaf
	// before the first entry (an empty session's), as leafId answers it.
	IfLeaf nullable[string] `json:"ifLeaf"`
}

// parseDrafts reads the drafts of an append request: each one as
// `sessiontree append` reads a line ([cli.ParseDraft]), after its
// insignificant white space is removed, since a stored entry is one line,
// and checked as every backend checks it, its type's fields included
// ([sessiontree.CheckDraftFields]).
// An error names the draft by its index and matches
// [sessiontree.ErrInvalidEntry].
func parseDrafts(raw []json.RawMessage) ([]sessiontree.Draft, error) {
	drafts := make([]sessiontree.Draft, 0, len(raw))
	for i, one := range raw {
		var line bytes.Buffer
		if err := json.Compact(&line, one); err != nil {
			return nil, fmt.Errorf("entries[%d]: %w", i, &sessiontree.InvalidEntryError{Reason: err.Error()})
		}
		d, err := cli.ParseDraft(line.Bytes())
		if err == nil && dotSegment(d.ID) {
			err = fmt.Errorf(`"id" %q: the route of an entry cannot name a dot segment`, d.ID)
		}
		if err != nil {
			return nil, fmt.Errorf("entries[%d]: %w", i, &sessiontree.InvalidEntryError{Reason: err.Error()})
		}
		if err := sessiontree.CheckDraftFields(d); err != nil {
			return nil, fmt.Errorf("entries[%d]: %w", i, err)
		}
		drafts = append(drafts, d)
	}
	return drafts, nil
}

// appendEntries appends the drafts in one transaction and answers the
// stored entries (201); a stale ifLeaf is 409 and writes nothing.
func (srv *Server) appendEntries(w http.ResponseWriter, r *http.Request) error {
	return withBody(srv, r, func(req appendRequest, st sessiontree.DatabaseSession) error {
		if len(req.Entries) == 0 {
			return fmt.Errorf(`body: "entries" must hold at least one entry: %w`, ErrBadRequest)
		}
		drafts, err := parseDrafts(req.Entries)
		if err != nil {
			return err
		}
		out, err := st.AppendAll(r.Context(), drafts, sessiontree.AppendOptions{IfLeaf: leafGuard(req.IfLeaf)})
		if err != nil {
			return err
		}
		return respond(w, http.StatusCreated, func(w io.Writer) error { return view.WriteEntriesJSON(w, out, compact) })
	})
}

// leafRequest is the body of POST /api/sessions/{id}/leaf.
type leafRequest struct {
	// EntryID is where the leaf goes: an id or unique prefix; null (or
	// "root") for before the first entry. It is required: a body without
	// it (a client's mistake) must not move the leaf to the root.
	EntryID nullable[string] `json:"entryId"`
	// Summary, when present, is a summary of the branch being left.
	Summary *string `json:"summary"`
}

// nullable is a member of a request that may be null, and must be there.
type nullable[T any] struct {
	set bool // the member is in the request, null or not
	v   *T   // its value; nil for null
}

// UnmarshalJSON takes the member's value, null included.
func (n *nullable[T]) UnmarshalJSON(b []byte) error {
	n.set = true
	return json.Unmarshal(b, &n.v)
}

// leafGuard returns the guard of an ifLeaf member: nil when it is
// absent, "" for null (the leaf before the first entry).
func leafGuard(n nullable[string]) *string {
	if !n.set {
		return nil
	}
	id := ""
	if n.v != nil {
		id = *n.v
	}
	return &id
}

// moveLeaf is `goto`: it answers {"leafId": the new leaf or null}.
func (srv *Server) moveLeaf(w http.ResponseWriter, r *http.Request) error {
	return withBody(srv, r, func(req leafRequest, st sessiontree.DatabaseSession) error {
		if !req.EntryID.set {
			return fmt.Errorf(`body: "entryId" is required (null for before the first entry): %w`, ErrBadRequest)
		}
		target := ""
		if req.EntryID.v != nil {
			var err error
			if target, err = resolveEntry(r.Context(), st, *req.EntryID.v, true); err != nil {
				return err
			}
		}
		var bs *sessiontree.BranchSummary
		if req.Summary != nil {
			bs = &sessiontree.BranchSummary{Summary: *req.Summary}
		}
		id, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).MoveTo(r.Context(), target, bs)
		if err != nil {
			return err
		}
		if id == "" {
			id = target
		}
		var leaf *string
		if id != "" {
			leaf = &id
		}
		writeJSON(w, http.StatusOK, map[string]*string{"leafId": leaf})
		return nil
	})
}

// labelRequest is the body of POST /api/sessions/{id}/labels.
type labelRequest struct {
	EntryID string `json:"entryId"`
	// Label is kept as written; "" clears the label.
	Label string `json:"label"`
}

// setLabel is `label`: it answers the label entry written (201).
func (srv *Server) setLabel(w http.ResponseWriter, r *http.Request) error {
	return withBody(srv, r, func(req labelRequest, st sessiontree.DatabaseSession) error {
		target, err := resolveEntry(r.Context(), st, req.EntryID, false)
		if err != nil {
			return err
		}
		e, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).SetLabel(r.Context(), target, req.Label)
		return writeEntry(w, e, err)
	})
}

// nameRequest is the body of POST /api/sessions/{id}/name.
type nameRequest struct {
	// Name is the new name; "" clears it. It is required: a body without
	// it (a client's mistake) must not clear the name.
	Name *string `json:"name"`
}

// setName is `name`: it answers the session_info entry written (201).
func (srv *Server) setName(w http.ResponseWriter, r *http.Request) error {
	return withBody(srv, r, func(req nameRequest, st sessiontree.DatabaseSession) error {
		if req.Name == nil {
			return fmt.Errorf(`body: "name" is required ("" clears the name): %w`, ErrBadRequest)
		}
		e, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).SetName(r.Context(), *req.Name)
		return writeEntry(w, e, err)
	})
}

// editRequest is the body of POST /api/sessions/{id}/edits: exactly one
// of Omit and Content, as `edit` takes exactly one of --omit and
// --content-json.
type editRequest struct {
	EntryID string `json:"entryId"`
	// Omit takes the entry out of the model's context.
	Omit bool `json:"omit"`
	// Content replaces the entry's content: a string or an array of
	// content blocks.
	Content json.RawMessage `json:"content"`
}

// editContext is `edit`: it answers the context_edit entry written (201).
func (srv *Server) editContext(w http.ResponseWriter, r *http.Request) error {
	return withBody(srv, r, func(req editRequest, st sessiontree.DatabaseSession) error {
		if string(req.Content) == "null" {
			req.Content = nil // null is no content, not a replacement
		}
		if req.Omit == (req.Content != nil) {
			return fmt.Errorf(`body: give exactly one of "omit": true and "content": %w`, ErrBadRequest)
		}
		id, err := cli.ParseEntryArg(req.EntryID, false)
		if err != nil {
			return err
		}
		target, err := cli.EditTarget(r.Context(), st, id)
		if err != nil {
			return err
		}
		e, err := sessiontree.NewSession(st, sessiontree.SessionOptions{}).EditContext(r.Context(), target, req.Content)
		return writeEntry(w, e, err)
	})
}

// writeEntry answers one entry written (201), or err.
func writeEntry(w http.ResponseWriter, e sessiontree.Entry, err error) error {
	if err != nil {
		return err
	}
	return respond(w, http.StatusCreated, func(w io.Writer) error {
		_, err := w.Write(append(e.Raw[:len(e.Raw):len(e.Raw)], '\n'))
		return err
	})
}

// forkRequest is the body of POST /api/sessions/{id}/fork: at most one of
// At, Before and Tree, as `fork` takes them.
type forkRequest struct {
	// At and Before, when present, name an entry (id or unique prefix);
	// "" is refused, as fork --at "" is, not taken for the leaf.
	At     *string `json:"at"`
	Before *string `json:"before"`
	Tree   bool    `json:"tree"`
	// ID and Cwd are the new session's; empty means a fresh id, the
	// source's directory.
	ID  string `json:"id"`
	Cwd string `json:"cwd"`
}

// fork is `fork`: it answers the new session's info (201).
func (srv *Server) fork(w http.ResponseWriter, r *http.Request) error {
	return withBody(srv, r, func(req forkRequest, st sessiontree.DatabaseSession) error {
		if err := checkNewID(req.ID); err != nil {
			return err
		}
		cwd, err := bodyCwd(req.Cwd)
		if err != nil {
			return err
		}
		opts := store.ForkOptions{Tree: req.Tree, ID: req.ID, Cwd: cwd}
		if opts.At, err = forkPoint(r.Context(), st, "at", req.At); err != nil {
			return err
		}
		if opts.Before, err = forkPoint(r.Context(), st, "before", req.Before); err != nil {
			return err
		}
		forked, err := srv.store.Fork(r.Context(), st.ID(), opts)
		if err != nil {
			return err
		}
		defer forked.Close()
		return srv.writeInfo(w, r.Context(), http.StatusCreated, forked)
	})
}

// forkPoint resolves the entry the member ("at" or "before") of a fork
// request names, "" when the member is absent (or null).
func forkPoint(ctx context.Context, st sessiontree.Storage, member string, arg *string) (string, error) {
	if arg == nil {
		return "", nil
	}
	id, err := resolveEntry(ctx, st, *arg, false)
	if err != nil {
		return "", fmt.Errorf("body: %q: %w", member, err)
	}
	return id, nil
}
