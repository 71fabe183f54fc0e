package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sessiontree/sessiontree"
)

// The sessions table as a list reads it: prefixes, one row, pages.

// ResolvePrefix implements [sessiontree.DatabaseTx.ResolvePrefix]: a range
// of the sessions table's id index.
func (tx *Tx) ResolvePrefix(prefix string, limit int) ([]string, error) {
	rows, err := tx.tx.QueryContext(tx.ctx, `SELECT id FROM sessions WHERE id >= ? AND deleting = 0 ORDER BY id LIMIT ?`,
		prefix, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanIDs(rows, func(id string) bool { return strings.HasPrefix(id, prefix) })
}

// idRows is a result set of ids, of either kind the engine reads: the
// driver connection's (*rows) or database/sql's.
type idRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanIDs collects the ids rs holds, in order, up to the first that keep
// refuses.
func scanIDs(rs idRows, keep func(id string) bool) ([]string, error) {
	var ids []string
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		if !keep(id) {
			break
		}
		ids = append(ids, id)
	}
	return ids, rs.Err()
}

const infoCols = `s.id, coalesce(s.name, ''), s.cwd, s.created_at, s.updated_at, s.entry_count, s.message_count,
       coalesce(s.first_user_text, ''), coalesce(s.parent_session, ''), coalesce(s.leaf_id, ''), s.metadata`

func scanInfo(sc interface{ Scan(...any) error }, pre ...any) (sessiontree.SessionInfo, error) {
	var in sessiontree.SessionInfo
	var md sql.NullString
	err := sc.Scan(append(pre, &in.ID, &in.Name, &in.Cwd, &in.CreatedAt, &in.UpdatedAt, &in.Entries, &in.Messages,
		&in.FirstUserMessage, &in.ParentSession, &in.Leaf, &md)...)
	if md.Valid {
		in.Metadata = json.RawMessage(md.String)
	}
	return in, err
}

// scanFunc is a Scan method made of a function.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// Info implements [sessiontree.InfoReader]: the session's row, by its
// key, with the columns [Tx.SessionInfo] reads by id.
func (s *Storage) Info(ctx context.Context) (sessiontree.SessionInfo, error) {
	return scanInfo(scanFunc(func(dest ...any) error {
		return s.one(ctx, "read info", `SELECT `+infoCols+` FROM sessions s WHERE s.pk = ?1 AND s.deleting = 0`, dest...)
	}))
}

// SessionInfo implements [sessiontree.DatabaseTx.SessionInfo].
func (tx *Tx) SessionInfo(id string) (sessiontree.SessionInfo, error) {
	in, err := scanInfo(tx.tx.QueryRowContext(tx.ctx, `SELECT `+infoCols+` FROM sessions s WHERE s.id = ? AND s.deleting = 0`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return in, &SessionNotFoundError{ID: id}
	}
	return in, err
}

// ListSessions implements [sessiontree.DatabaseTx.ListSessions]. With a
// Cwd it is a range of the sessions_by_cwd index; without it, a scan of
// the sessions table that keeps the page's rows in a top-N sort.
func (tx *Tx) ListSessions(lq sessiontree.ListQuery) ([]sessiontree.ListedSession, error) {
	where := []string{"deleting = 0"}
	var params []any
	if lq.Cwd != "" {
		where = append(where, "cwd = ?")
		params = append(params, lq.Cwd)
	}
	if lq.Name != "" {
		where = append(where, `name LIKE ? ESCAPE '\'`)
		params = append(params, "%"+likeEscape(lq.Name)+"%")
	}
	if lq.AfterKey != 0 {
		where = append(where, "(updated_at < ? OR (updated_at = ? AND pk < ?))")
		params = append(params, lq.AfterUpdated, lq.AfterUpdated, lq.AfterKey)
	}
	// The inner query sorts keys only; the outer one reads the page's
	// rows, so a long first message is never carried through the sort.
	query := `SELECT s.pk, ` + infoCols + ` FROM (
    SELECT pk FROM sessions WHERE ` + strings.Join(where, " AND ") + `
    ORDER BY updated_at DESC, pk DESC LIMIT ?) AS p
JOIN sessions s ON s.pk = p.pk
ORDER BY s.updated_at DESC, s.pk DESC`
	params = append(params, lq.Limit)
	rows, err := tx.tx.QueryContext(tx.ctx, query, params...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]sessiontree.ListedSession, 0, min(lq.Limit, 64))
	for rows.Next() {
		out = append(out, sessiontree.ListedSession{})
		ls := &out[len(out)-1]
		if ls.Info, err = scanInfo(rows, &ls.Key); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// likeEscape escapes s for a LIKE pattern with ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// sessionKey returns the key of session id, which must exist.
func (tx *Tx) sessionKey(id string) (int64, error) {
	var pk int64
	err := tx.tx.GetContext(tx.ctx, &pk, `SELECT pk FROM sessions WHERE id = ? AND deleting = 0`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return 0, fmt.Errorf("session %s: %w", id, err)
	}
	return pk, nil
}
