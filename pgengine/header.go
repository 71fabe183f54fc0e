package pgengine

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/migrate"
)

// The header's checksum (migration 18): sessions.header_checksum is the
// sessiontree.HeaderChecksum of the row's header columns, written by the
// insert that creates the session (createSession) and compared with them
// by Check (checkHeader) and by an export (ExportHead), which would
// otherwise write another first line than the one the session was
// created with.

// headerUnsummed is true for a sessions row whose header has no sum yet:
// an engine older than migration 18 created it, and the next Open sums
// it (header_checksum_fill, migration 19).
const headerUnsummed = `header_checksum IS NULL AND EXISTS (SELECT 1 FROM header_checksum_fill f WHERE f.session = sessions.pk)`

// headerColumns are the sessions columns holding a header and its
// checksum, as headerRow reads them.
const headerColumns = `pk, id, version, created_at, cwd, coalesce(parent_session, '') AS parent_session, header_checksum, ` +
	headerUnsummed + ` AS unsummed`

// headerRow is a session's header as its row holds it.
type headerRow struct {
	PK            int64         `db:"pk"`
	ID            string        `db:"id"`
	Version       int           `db:"version"`
	CreatedAt     string        `db:"created_at"`
	Cwd           string        `db:"cwd"`
	ParentSession string        `db:"parent_session"`
	Sum           sql.NullInt64 `db:"header_checksum"`
	Unsummed      bool          `db:"unsummed"`
}

// meta is the header.
func (h *headerRow) meta() sessiontree.SessionMeta {
	return sessiontree.SessionMeta{ID: h.ID, Version: h.Version, CreatedAt: h.CreatedAt, Cwd: h.Cwd, ParentSession: h.ParentSession}
}

// verify reports a header that does not match its checksum.
func (h *headerRow) verify() error { return verifyHeader(h.meta(), h.Sum, h.Unsummed) }

// verifyHeader reports a header m that does not match its checksum sum;
// one not summed yet (unsummed: headerUnsummed) has nothing to match.
func verifyHeader(m sessiontree.SessionMeta, sum sql.NullInt64, unsummed bool) error {
	if unsummed {
		return nil
	}
	return sessiontree.VerifyHeaderChecksum(m, sum)
}

// checkHeader compares s's header columns with their checksum: one row.
func (s *Storage) checkHeader(ctx context.Context) error {
	var h headerRow
	if err := sqlx.GetContext(ctx, s.db.reader(ctx), &h, `SELECT `+headerColumns+` FROM sessions WHERE pk = $1`, s.pk); err != nil {
		return storageErr(err)
	}
	return h.verify()
}

// headerFillBatch is how many sessions one transaction of
// fillHeaderChecksums gives their checksum.
const headerFillBatch = 1000

// fillHeaderChecksums gives the sessions listed in header_checksum_fill
// (migration 18: those stored before it; migration 19: those an older
// engine creates since) the checksum of their header
// columns, batch sessions per transaction (headerFillBatch), which takes
// them off the list, so that an interrupted run goes on at the next Open.
// Open calls it after the migrations when any is listed
// (afterMigrations).
func (db *DB) fillHeaderChecksums(ctx context.Context, batch int) error {
	for done := false; !done; {
		err := db.upkeep(ctx, "fill header checksums", func(tx *sqlx.Tx) (err error) {
			done, err = fillHeaderBatch(ctx, tx, batch)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// fillHeaderBatch writes the checksums of the first batch sessions
// listed and takes them off the list; done when it took the last. It holds the migrations' advisory lock, as redoNext does, so that
// no process opening the database at once returns before every listed
// session has its checksum.
func fillHeaderBatch(ctx context.Context, tx *sqlx.Tx, batch int) (done bool, err error) {
	if err := migrate.LockPostgres(ctx, tx); err != nil {
		return false, err
	}
	var keys []int64
	if err := tx.SelectContext(ctx, &keys, `DELETE FROM header_checksum_fill WHERE session IN
		(SELECT session FROM header_checksum_fill ORDER BY session LIMIT $1) RETURNING session`, batch); err != nil {
		return false, err
	}
	var rows []headerRow
	if err := tx.SelectContext(ctx, &rows, `SELECT `+headerColumns+` FROM sessions WHERE pk = ANY ($1)`, keys); err != nil {
		return false, err
	}
	pks, sums := make([]int64, len(rows)), make([]int64, len(rows))
	for i := range rows {
		pks[i], sums[i] = rows[i].PK, sessiontree.HeaderChecksum(rows[i].meta())
	}
	_, err = tx.ExecContext(ctx, `UPDATE sessions s SET header_checksum = x.sum
		FROM unnest($1::bigint[], $2::bigint[]) AS x (pk, sum) WHERE s.pk = x.pk`, pks, sums)
	if err != nil {
		return false, fmt.Errorf("write header checksums: %w", err)
	}
	return len(keys) < batch, nil
}
