package store

// The store's record of each imported file, kept by the engine
// (engine/imports.go owns the imports table): how it is read, compared
// and saved with each commit.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// record is the store's record of an imported file: the engine's
// sessiontree.ImportRecord (the imports table, which the engine owns),
// with the JSONL reader's resume point decoded.
type record struct {
	sessiontree.ImportRecord
	// Position is where the reader resumes after the imported bytes
	// (ImportRecord.Resume, decoded).
	Position jsonl.Position
}

// newRecord is the record of a file whose first consumed bytes, hashed
// by h, are imported into session sessionID, which then holds entries
// entries; the reader resumes at pos.
func newRecord(sessionID string, consumed int64, pos jsonl.Position, h hash.Hash, entries int64) record {
	return record{ImportRecord: sessiontree.ImportRecord{SessionID: sessionID, ImportedBytes: consumed,
		PrefixSHA256: hex.EncodeToString(h.Sum(nil)), SessionEntries: entries}, Position: pos}
}

// unchangedAt tells whether the file, as fi says it is now, is as the
// record left it, once its imported bytes are found unchanged
// (checkPrefix): the same size and, when the record's size counts bytes
// after the imported ones (a torn last line left for later, which the
// hash does not cover), the same modification time. A writer may have
// cut those bytes and written as many others (jsonl.Storage cuts a torn
// line before it writes): a new entry in a file of the same size.
func (r record) unchangedAt(fi os.FileInfo) bool {
	return fi.Size() == r.Size && (r.Size == r.ImportedBytes || fi.ModTime().Equal(r.ModTime))
}

// sameRecord tells whether a and b record the same import of a file,
// whatever the times they were saved at.
func sameRecord(a, b record) bool {
	a.ModTime, a.ImportedAt, b.ModTime, b.ImportedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b
}

// readRecord reads the record of the file at path in tx, and false when
// there is none.
func readRecord(tx sessiontree.DatabaseTx, path string) (record, bool, error) {
	r, found, err := tx.ImportRecord(path)
	if err != nil || !found {
		return record{}, found, err
	}
	rec := record{ImportRecord: r}
	if err := json.Unmarshal([]byte(r.Resume), &rec.Position); err != nil {
		return record{}, false, fmt.Errorf("read import record of %s: position: %w", path, err)
	}
	return rec, true, nil
}

// recheck reads the file's record again in tx, the transaction about to
// write (or the read that checks a new file's header), and returns
// errMeanwhile, as a conflict outcome, when another import changed it
// since this one read it.
func (fim *fileImport) recheck(tx sessiontree.DatabaseTx) (record, bool, error) {
	cur, found, err := readRecord(tx, fim.path)
	if err != nil {
		return cur, found, err
	}
	if found != fim.found || found && (cur.ImportedBytes != fim.rec.ImportedBytes || cur.SessionID != fim.rec.SessionID) {
		return cur, found, &outcomeError{OutcomeConflict, errMeanwhile}
	}
	return cur, found, nil
}

// save writes rec, the file's record, in tx. Its size is that of the
// imported part, or of the whole file after the last commit (final): a
// record of the file's size says "nothing new" to the next import, until
// the file changes, and before the last commit the record must say "more
// to import". The size is the one the import found before it read the
// file: lines added while it read are then new to the next import, even
// those it did not see.
func (fim *fileImport) save(tx sessiontree.DatabaseTx, rec *record, final bool) error {
	rec.Size = rec.ImportedBytes
	if final {
		rec.Size = max(fim.fi.Size(), rec.ImportedBytes)
	}
	posJSON, err := json.Marshal(rec.Position)
	if err != nil {
		return fmt.Errorf("record import: %w", err)
	}
	rec.Path, rec.ModTime, rec.Resume, rec.ImportedAt = fim.path, fim.fi.ModTime(), string(posJSON), time.Now()
	return tx.PutImportRecord(rec.ImportRecord)
}

// committed takes rec, the file's record, as the one a commit just
// wrote.
func (fim *fileImport) committed(rec record) {
	if !fim.found {
		fim.res.Outcome = OutcomeNew
	}
	fim.found, fim.rec = true, rec
}
