package store

import (
	"context"
	"fmt"

	"github.com/sessiontree/sessiontree"
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
	var rows []sessiontree.UnknownTypeRow
	err := s.d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		rows, err = tx.UnknownTypes(id, sessiontree.EntryTypes)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("warnings: %w", err)
	}
	var out []Warning
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].SessionID != r.SessionID {
			out = append(out, Warning{SessionID: r.SessionID, File: r.File})
		}
		w := &out[len(out)-1]
		w.Unknown = append(w.Unknown, sessiontree.TypeCount{Type: r.Type, Count: r.Count})
	}
	return out, nil
}
