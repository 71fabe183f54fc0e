package testdb

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/jmoiron/sqlx"
)

// DamageIndexPage changes one letter of text on the root page of index
// in the database file at path, leaving the table's rows as they were: an
// index entry that disagrees with its row, for tests of the checks. The
// root page holds all of a small database's entries of the index; text
// must be on it once. The database must be closed (checkpointed).
func DamageIndexPage(ctx context.Context, path, index, text string) error {
	var root, pageSize int64
	err := View(ctx, path, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &root, `SELECT rootpage FROM sqlite_schema WHERE name = ?`, index); err != nil {
			return err
		}
		return tx.GetContext(ctx, &pageSize, `PRAGMA page_size`)
	})
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if int64(len(data)) < root*pageSize {
		return fmt.Errorf("damage index %s: page %d is past the file's end (not checkpointed?)", index, root)
	}
	page := data[(root-1)*pageSize : root*pageSize]
	if n := bytes.Count(page, []byte(text)); n != 1 {
		return fmt.Errorf("damage index %s: its page holds %q %d times; want once", index, text, n)
	}
	page[bytes.Index(page, []byte(text))+1] ^= 0x01 // a letter for another: the record keeps its length
	return os.WriteFile(path, data, 0o600)
}
