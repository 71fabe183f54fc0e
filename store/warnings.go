package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// Warning is something [Store.Warnings] notices about a session that is
// not damage: it holds entries of types this version does not know. They
// are stored, read and exported byte for byte like any other entry, and
// contribute nothing to the context, as in pi; the warning only says that
// this version does not interpret them.
type Warning struct {
	// SessionID is the session.
	SessionID string `json:"sessionId"`
	// File is the pi file the session was imported from ("" when it was
	// not imported), to name it as the import did.
	File string `json:"file,omitempty"`
	// Unknown counts the session's entries of types this version does not
	// know, per type in the order first appended.
	Unknown sessiontree.UnknownTypes `json:"unknownTypes"`
}

// Where names what the warning is about: the file the session was
// imported from, else "session <id>". What it says is
// [sessiontree.UnknownTypes.String] of Unknown.
func (w Warning) Where() string {
	if w.File != "" {
		return w.File
	}
	return "session " + w.SessionID
}

// Warnings lists, for session id (exact; every session when id is ""),
// what a check notices that is not damage: one [Warning] per session
// holding entries of types this version does not know, in the order the
// sessions were created. [Store.Check] reports damage; this is the rest
// of what the command line's check prints. It reads the entries index by
// type, not the entries.
func (s *Store) Warnings(ctx context.Context, id string) ([]Warning, error) {
	var out []Warning
	err := s.db.View(ctx, func(tx *sqlx.Tx) error {
		var err error
		out, err = unknownTypeWarnings(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("warnings: %w", err)
	}
	return out, nil
}

// unknownTypeWarnings is Warnings in a read transaction. The known types
// come from sessiontree.EntryTypes, their one owner; messages, most of a
// log and never unknown, are left out first, as the index by type does.
func unknownTypeWarnings(ctx context.Context, tx *sqlx.Tx, id string) ([]Warning, error) {
	known := make([]any, 0, len(sessiontree.EntryTypes)+1)
	for _, t := range sessiontree.EntryTypes {
		known = append(known, string(t))
	}
	where := "s.deleting = 0"
	if id != "" {
		var pk int64
		err := tx.GetContext(ctx, &pk, `SELECT pk FROM sessions WHERE id = ? AND deleting = 0`, id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, &engine.SessionNotFoundError{ID: id}
		}
		if err != nil {
			return nil, err
		}
		where = "e.session = ?"
		known = append(known, pk)
	}
	rows, err := tx.QueryContext(ctx, `SELECT s.id, coalesce((SELECT min(path) FROM imports i WHERE i.session_id = s.id), ''),
       e.type, count(*), min(e.seq)
FROM entries e JOIN sessions s ON s.pk = e.session
WHERE e.type <> 'message' AND e.type NOT IN (?`+strings.Repeat(",?", len(sessiontree.EntryTypes)-1)+`) AND `+where+`
GROUP BY e.session, e.type
ORDER BY e.session, min(e.seq)`, known...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Warning
	for rows.Next() {
		var sid, file, typ string
		var n, first int64
		if err := rows.Scan(&sid, &file, &typ, &n, &first); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].SessionID != sid {
			out = append(out, Warning{SessionID: sid, File: file})
		}
		w := &out[len(out)-1]
		w.Unknown = append(w.Unknown, sessiontree.TypeCount{Type: sessiontree.EntryType(typ), Count: int(n)})
	}
	return out, rows.Err()
}
