package pgengine

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// This file owns the session rows through the contract: creating,
// finding, listing and deleting sessions inside a [Tx].

// NewSession implements [sessiontree.DatabaseTx.NewSession]: an empty
// meta.ID gets a fresh UUID v7, an empty CreatedAt the current time, a
// zero Version 3; an id in use is a [*sessiontree.SessionExistsError].
func (tx *Tx) NewSession(meta sessiontree.SessionMeta, metadata json.RawMessage) (sessiontree.DatabaseSession, error) {
	st, err := createSession(tx.ctx, tx.db, tx.tx, meta, metadata)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// createSession inserts a session's row in tx and returns it opened.
func createSession(ctx context.Context, db *DB, tx *sqlx.Tx, meta sessiontree.SessionMeta, metadata json.RawMessage) (*Storage, error) {
	if meta.ID == "" {
		id, err := sessiontree.NewSessionID()
		if err != nil {
			return nil, fmt.Errorf("new session id: %w", err)
		}
		meta.ID = id
	}
	meta.Version = cmp.Or(meta.Version, 3)
	if meta.CreatedAt == "" {
		meta.CreatedAt = sessiontree.FormatTime(now())
	}
	if err := sessiontree.CheckSessionMeta(meta); err != nil {
		return nil, fmt.Errorf("create session %q: %w", meta.ID, err)
	}
	for _, f := range []struct{ name, value string }{{"id", meta.ID}, {"cwd", meta.Cwd}} {
		if reason := tooLongKey(f.value); reason != "" {
			return nil, fmt.Errorf("create session: %w", &sessiontree.InvalidSessionMetaError{Field: f.name, Reason: reason})
		}
	}
	var md any // NULL: none
	if metadata != nil {
		if !json.Valid(metadata) {
			return nil, fmt.Errorf("create session %s: metadata is not valid JSON: %w", meta.ID, sessiontree.ErrInvalidEntry)
		}
		md = string(metadata)
	}
	var pk int64
	// A savepoint keeps the transaction usable after a refused id.
	err := savepoint(ctx, tx, func() error {
		return tx.GetContext(ctx, &pk, `INSERT INTO sessions (id, version, created_at, cwd, parent_session, updated_at, metadata, header_checksum)
			VALUES ($1, $2, $3, $4, $5, $3, $6, $7) RETURNING pk`,
			meta.ID, meta.Version, meta.CreatedAt, meta.Cwd, nullString(meta.ParentSession), md, sessiontree.HeaderChecksum(meta))
	})
	if isUniqueViolation(err) {
		return nil, &sessiontree.SessionExistsError{ID: meta.ID}
	}
	if err != nil {
		return nil, fmt.Errorf("create session %s: %w", meta.ID, storageErr(err))
	}
	return &Storage{db: db, pk: pk, meta: meta}, nil
}

// savepoint runs fn inside a savepoint of tx: when fn fails, what it did
// is undone and tx stays usable (PostgreSQL aborts a whole transaction on
// an error otherwise).
func savepoint(ctx context.Context, tx *sqlx.Tx, fn func() error) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT pgengine`); err != nil {
		return err
	}
	if err := fn(); err != nil {
		if _, rerr := tx.ExecContext(context.WithoutCancel(ctx), `ROLLBACK TO SAVEPOINT pgengine`); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	_, err := tx.ExecContext(ctx, `RELEASE SAVEPOINT pgengine`)
	return err
}

// ResolvePrefix implements [sessiontree.DatabaseTx.ResolvePrefix]
// through the index on ids in byte order (migration 2): a LIKE pattern
// with a fixed prefix is a range of it.
func (tx *Tx) ResolvePrefix(prefix string, limit int) ([]string, error) {
	if !storableText(prefix) {
		return nil, nil // no id starts with it; the server would refuse the text
	}
	var ids []string
	err := tx.tx.SelectContext(tx.ctx, &ids, `SELECT id FROM sessions
		WHERE id COLLATE "C" LIKE $1 ESCAPE '\' AND NOT deleting ORDER BY id COLLATE "C" LIMIT $2`,
		likePrefix(prefix), limit)
	if err != nil {
		return nil, fmt.Errorf("resolve session prefix %q: %w", prefix, storageErr(err))
	}
	return ids, nil
}

// likePrefix is the LIKE pattern of the strings that start with prefix.
func likePrefix(prefix string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix) + "%"
}

// infoColumns are the sessions columns a SessionInfo is read from.
const infoColumns = `pk, id, coalesce(name, '') AS name, cwd, created_at, updated_at, entry_count, message_count,
	coalesce(first_user_text, '') AS first_user_text, coalesce(parent_session, '') AS parent_session,
	coalesce(leaf_id, '') AS leaf_id, metadata`

// infoRow is a sessions row as infoColumns read it.
type infoRow struct {
	PK            int64          `db:"pk"`
	ID            string         `db:"id"`
	Name          string         `db:"name"`
	Cwd           string         `db:"cwd"`
	CreatedAt     string         `db:"created_at"`
	UpdatedAt     string         `db:"updated_at"`
	Entries       int64          `db:"entry_count"`
	Messages      int64          `db:"message_count"`
	FirstUser     string         `db:"first_user_text"`
	ParentSession string         `db:"parent_session"`
	Leaf          string         `db:"leaf_id"`
	Metadata      sql.NullString `db:"metadata"`
}

func (r infoRow) info() sessiontree.SessionInfo {
	in := sessiontree.SessionInfo{ID: r.ID, Name: r.Name, Cwd: r.Cwd, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Entries: r.Entries, Messages: r.Messages, FirstUserMessage: r.FirstUser, ParentSession: r.ParentSession, Leaf: r.Leaf}
	if r.Metadata.Valid {
		in.Metadata = json.RawMessage(r.Metadata.String)
	}
	return in
}

// Info implements [sessiontree.InfoReader]: the session's row, by its
// key, with the columns [Tx.SessionInfo] reads by id.
func (s *Storage) Info(ctx context.Context) (sessiontree.SessionInfo, error) {
	var r infoRow
	if err := s.get(ctx, "read info", &r, `SELECT `+infoColumns+` FROM sessions WHERE pk = $1 AND NOT deleting`); err != nil {
		return sessiontree.SessionInfo{}, err
	}
	return r.info(), nil
}

// SessionInfo implements [sessiontree.DatabaseTx.SessionInfo]; in a
// write transaction it locks the row (rowRead).
func (tx *Tx) SessionInfo(id string) (sessiontree.SessionInfo, error) {
	var r infoRow
	err := tx.rowRead(&r, infoColumns, id)
	if errors.Is(err, sql.ErrNoRows) {
		return sessiontree.SessionInfo{}, &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return sessiontree.SessionInfo{}, fmt.Errorf("session info %s: %w", id, storageErr(err))
	}
	return r.info(), nil
}

// ListSessions implements [sessiontree.DatabaseTx.ListSessions]: the
// sessions rows past the cursor that pass the filters, newest first, in
// a top-N sort; a cwd is read by its index. There is no index on
// updated_at, which every append changes (migration 7: it would make
// each append's row update a full one, not a HOT one).
func (tx *Tx) ListSessions(q sessiontree.ListQuery) ([]sessiontree.ListedSession, error) {
	if q.Limit <= 0 {
		return nil, fmt.Errorf("list sessions: limit %d: must be > 0", q.Limit)
	}
	if !storableText(q.Cwd) || !utf8.ValidString(q.Name) {
		// No session has such a cwd, nor a name that is not UTF-8; the
		// server would refuse the text (a storage failure).
		return nil, nil
	}
	where := []string{"NOT deleting"}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.AfterKey != 0 {
		where = append(where, fmt.Sprintf("(updated_at COLLATE \"C\", pk) < (%s, %s)", arg(q.AfterUpdated), arg(q.AfterKey)))
	}
	if q.Cwd != "" {
		where = append(where, "cwd = "+arg(q.Cwd))
	}
	if q.Name != "" {
		// ASCII case only, as the SQLite engine's LIKE.
		where = append(where, "strpos(translate(name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), "+arg(asciiLower(q.Name))+") > 0")
	}
	query := `SELECT ` + infoColumns + ` FROM sessions WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY updated_at COLLATE "C" DESC, pk DESC LIMIT ` + arg(q.Limit)
	var rows []infoRow
	if err := tx.tx.SelectContext(tx.ctx, &rows, query, args...); err != nil {
		return nil, fmt.Errorf("list sessions: %w", storageErr(err))
	}
	out := make([]sessiontree.ListedSession, len(rows))
	for i, r := range rows {
		out[i] = sessiontree.ListedSession{Key: r.PK, Info: r.info()}
	}
	return out, nil
}

// asciiLower lower-cases the ASCII letters of s alone.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// DeleteSession implements [sessiontree.DatabaseTx.DeleteSession]: the
// session's row is locked, its claim checked (sessiontree.CheckDelete),
// the row marked deleting (the one state in which the triggers let its
// entries go), and everything it owns is deleted with it.
func (tx *Tx) DeleteSession(id string, opts sessiontree.DeleteOptions) error {
	if err := deleteSession(tx.ctx, tx.tx, id, tx.db.opts.now(), opts); err != nil {
		return fmt.Errorf("delete session %s: %w", id, storageErr(err))
	}
	return nil
}

// deleteSession deletes session id and what it owns in tx, unless
// another holder's claim on it is live at now and opts does not force.
func deleteSession(ctx context.Context, tx *sqlx.Tx, id string, now time.Time, opts sessiontree.DeleteOptions) error {
	if !storableText(id) {
		return &SessionNotFoundError{ID: id} // the server would refuse the text
	}
	var pk int64
	err := tx.GetContext(ctx, &pk, `SELECT pk FROM sessions WHERE id = $1 AND NOT deleting FOR UPDATE`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return &SessionNotFoundError{ID: id}
	}
	if err != nil {
		return lockWaitErr(err)
	}
	if err := sessiontree.CheckDelete(claimRow{ctx, tx, pk}, id, opts, now); err != nil {
		return err
	}
	if err := dropTerms(ctx, tx, pk); err != nil {
		return err
	}
	for _, q := range sessionDeletes {
		if _, err := tx.ExecContext(ctx, q, pk, id); err != nil {
			return err
		}
	}
	return nil
}

// sessionDeletes delete a session ($1 its key, $2 its id) and what it
// owns, in order; a table added by a later migration adds its statement.
var sessionDeletes = []string{
	`UPDATE sessions SET deleting = true WHERE pk = $1 AND $2::text IS NOT NULL`,
	`DELETE FROM labels WHERE session = $1 AND $2::text IS NOT NULL`,
	`DELETE FROM branch WHERE session = $1 AND $2::text IS NOT NULL`,
	`DELETE FROM usage_days WHERE session = $1 AND $2::text IS NOT NULL`,
	// Wake the session's watches (Follow then finds it gone), as its
	// appends do (followChannel).
	`SELECT pg_notify('` + followChannel + `', $1::bigint::text || ' deleted') WHERE $2::text IS NOT NULL
		AND EXISTS (SELECT 1 FROM watchers WHERE session = $1)`,
	`DELETE FROM watchers WHERE session = $1 AND $2::text IS NOT NULL`,
	`DELETE FROM imports WHERE session_id = $2 AND $1::bigint IS NOT NULL`,
	`DELETE FROM entries WHERE session = $1 AND $2::text IS NOT NULL`,
	`DELETE FROM sessions WHERE pk = $1 AND $2::text IS NOT NULL`,
}

// AppendEntries implements [sessiontree.DatabaseTx.AppendEntries]: the
// batch runs under the session's row lock in a savepoint, so a refused
// batch leaves the transaction as it was.
func (tx *Tx) AppendEntries(s sessiontree.DatabaseSession, entries []sessiontree.Entry) error {
	st, ok := s.(*Storage)
	if !ok || st.db != tx.db {
		return fmt.Errorf("append batch: session %s belongs to another database", s.ID())
	}
	if len(entries) == 0 {
		return nil
	}
	err := savepoint(tx.ctx, tx.tx, func() error { return st.appendBatch(tx.ctx, tx.tx, entries) })
	if err != nil {
		return fmt.Errorf("append batch to %s: %w", st.meta.ID, storageErr(err))
	}
	return nil
}

// rowRead reads columns of session id's row into dest (sql.ErrNoRows
// when it has none, or is being deleted). In a write transaction it
// locks the row, as a write to the session does (lockQuery), so that no
// other write to the session commits before this transaction does: the
// caller may decide its write on what it read (a push's or an import's
// check that the session has the entries it planned on). A lock
// TryUpdate does not get is noted for WaitForLock.
func (tx *Tx) rowRead(dest any, columns, id string) error {
	q := `SELECT ` + columns + ` FROM sessions WHERE id = $1 AND NOT deleting`
	if !tx.write {
		return tx.tx.GetContext(tx.ctx, dest, q, id)
	}
	err := tx.tx.GetContext(tx.ctx, dest, q+` FOR UPDATE`, id)
	if isLockNotAvailable(err) {
		var pk int64
		if tx.db.db.GetContext(tx.ctx, &pk, `SELECT pk FROM sessions WHERE id = $1`, id) == nil {
			tx.db.contended.Store(pk)
		}
	}
	return lockWaitErr(err)
}
