package store

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// movedError ends the read of a new path whose session was imported from
// a file that no longer exists: the file may have moved
// ([ImportOptions.FollowRewrites]).
type movedError struct{ from string }

func (e *movedError) Error() string {
	return fmt.Sprintf("its session was imported from %s, which no longer exists", e.from)
}

// notFollowed is why a rewritten or moved file cannot be taken as the
// same file: its entries do not begin with its session's.
type notFollowed struct{ reason string }

func (e *notFollowed) Error() string { return e.reason }

// followRewrite follows a file whose import met err, a conflict: the file
// was rewritten since its import (from == "") or is a new path for a
// session imported from from, a path that no longer exists. When the
// import follows rewrites and the file begins with every entry of the
// session, the file's record is moved onto the file as it is now, and
// the attempt a is marked to start over (importFile then imports what
// follows those entries); its result until then says the file was taken
// meanwhile. Otherwise the conflict stands, saying why the file was not
// followed.
func (fim *fileImport) followRewrite(a *attempt, err error, from string) error {
	var oe *outcomeError
	if !fim.follow || from == "" && !(errors.As(err, &oe) && oe.outcome == OutcomeConflict) {
		return err
	}
	if from != "" {
		err = conflict("session %s is already in the store (from %s, which no longer exists)", fim.meta.ID, from)
		errors.As(err, &oe)
	}
	rerr := fim.rebase(from)
	var nf *notFollowed
	switch {
	case rerr == nil:
		fim.res.Rewritten, fim.res.MovedFrom = true, from
		a.again = true
		return &outcomeError{OutcomeConflict, errMeanwhile}
	case errors.As(rerr, &nf):
		reason := nf.reason
		if from == "" && fim.rec.Position.Version == 1 {
			reason += fmt.Sprintf(" (pi gives a version-1 file's entries new ids when it migrates it; deleting session %s from the store lets the file be imported again as it is now)",
				fim.rec.SessionID)
		}
		return &outcomeError{OutcomeConflict, fmt.Errorf("%w; not followed as the same file: %s", oe.err, reason)}
	}
	return rerr
}

// rebase moves the import record of the file (or of from, the path its
// session was imported from) onto the file as it is now: up to the end
// of the line holding the session's last entry, provided the file's
// entries begin with the session's, by id and in order. The session
// keeps what it holds. It fails with a *notFollowed when they do not.
func (fim *fileImport) rebase(from string) error {
	ctx := fim.ctx
	recPath := fim.path
	if from != "" {
		recPath = from
	}
	var rec record
	var found bool
	err := fim.s.d.View(ctx, func(tx sessiontree.DatabaseTx) (err error) {
		rec, found, err = readRecord(tx, recPath)
		return err
	})
	if err != nil {
		return err
	}
	if !found {
		return errMeanwhile
	}
	st, err := fim.s.d.OpenSession(ctx, rec.SessionID)
	if err != nil {
		return err
	}
	stored, err := st.Log(ctx, 0, 0)
	st.Close()
	if err != nil {
		return err
	}
	if int64(len(stored)) != rec.SessionEntries {
		return &notFollowed{fmt.Sprintf("session %s was written to in the store since the import", rec.SessionID)}
	}
	pos, h, err := fim.matchEntries(rec.SessionID, stored)
	if err != nil {
		return err
	}
	next := newRecord(rec.SessionID, pos.Offset, pos, h, rec.SessionEntries)
	return fim.gate.write(ctx, func(tx sessiontree.DatabaseTx) error {
		cur, ok, err := readRecord(tx, recPath)
		if err != nil {
			return err
		}
		if !ok || !sameRecord(cur, rec) {
			return errMeanwhile
		}
		if from != "" {
			if _, ok, err := readRecord(tx, fim.path); err != nil || ok {
				return cmp.Or(err, errMeanwhile)
			}
			if err := tx.DeleteImportRecord(from); err != nil {
				return err
			}
		}
		count, err := tx.SessionEntryCount(rec.SessionID)
		if err != nil {
			return err
		}
		if count != rec.SessionEntries {
			return errMeanwhile
		}
		return fim.save(tx, &next, false)
	})
}

// matchEntries reads the file from its start and returns the reader's
// position after the line holding the last of the stored entries (after
// the header when there are none), provided the file is the session's
// and its entries begin with the stored ones, by id and in order; and
// the hash state after the file's bytes up to it, as read.
func (fim *fileImport) matchEntries(sessionID string, stored []sessiontree.Entry) (jsonl.Position, hash.Hash, error) {
	var pos jsonl.Position
	n, matched := 0, false
	tee := newPrefixHash(io.NewSectionReader(fim.f, 0, fim.fi.Size()), sha256.New(), 0)
	for r, err := range jsonl.Read(fim.ctx, tee, jsonl.ReadOptions{Name: fim.path, Mode: fim.mode, SizeHint: fim.fi.Size(), MaxLineBytes: fim.maxLine}) {
		if err != nil {
			var le *jsonl.LineError
			if errors.As(err, &le) {
				return pos, nil, &notFollowed{err.Error()}
			}
			return pos, nil, err
		}
		switch {
		case r.Kind == jsonl.KindHeader && r.Header.ID != sessionID:
			return pos, nil, &notFollowed{fmt.Sprintf("the file is now session %s", r.Header.ID)}
		case r.Kind == jsonl.KindHeader:
			pos = r.Next
		case r.Kind == jsonl.KindEntry && n < len(stored):
			if r.Entry.ID != stored[n].ID {
				return pos, nil, &notFollowed{fmt.Sprintf("line %d holds entry %s where the session has %s", r.Line, r.Entry.ID, stored[n].ID)}
			}
			n++
			pos = r.Next
		}
		tee.consumed(pos.Offset)
		if matched = r.Kind != jsonl.KindTorn && n == len(stored) && pos.Offset > 0; matched {
			break
		}
	}
	if !matched {
		return pos, nil, &notFollowed{fmt.Sprintf("the file holds %d of the session's %d entries", n, len(stored))}
	}
	h, err := tee.at(pos.Offset)
	return pos, h, err
}

// skipClosedTorn skips the line the import resumes at when an earlier
// import left it torn (the file had bytes after the imported part) and a
// newline now ends it while it still is not JSON: pi ends a torn last
// line so when it opens a file, and skips it, as it skips every line that
// is not JSON. The line is the first that is not blank (jsonl.Blank)
// after the imported part, as the earlier read found it. It is reported
// in the result's Problems; the import goes on after it, and its record
// moves past it (and the blank lines before it) with the next commit.
func (fim *fileImport) skipClosedTorn() error {
	if !fim.follow || fim.rec.Size <= fim.rec.ImportedBytes {
		return nil
	}
	limit := int64(fim.maxLine)
	if limit <= 0 {
		limit = jsonl.DefaultMaxLineBytes
	}
	br := bufio.NewReader(io.NewSectionReader(fim.f, fim.start, fim.rec.Size-fim.start+limit+1))
	var blank []byte // the blank lines before it
	blanks := 0
	line, err := br.ReadBytes('\n')
	for ; err == nil && jsonl.Blank(line); line, err = br.ReadBytes('\n') {
		blank, blanks = append(blank, line...), blanks+1
	}
	if err != nil || !jsonl.Torn(line) {
		return nil // not ended by a newline (still torn, or longer than a line may be), or JSON
	}
	for _, b := range [][]byte{blank, line} {
		if _, err := fim.h.Write(b); err != nil {
			return fmt.Errorf("hash: %w", err)
		}
	}
	pos := *fim.from
	pos.Offset += int64(len(blank))
	pos.Line += blanks
	fim.skipped = append(fim.skipped, &jsonl.LineError{Path: fim.path, Line: pos.Line + 1, Offset: pos.Offset,
		Err: &sessiontree.CorruptError{Reason: "a torn line its writer ended with a newline, skipped as pi skips it"}})
	pos.Offset += int64(len(line))
	pos.Line++
	fim.from, fim.start = &pos, pos.Offset
	fim.res.Problems = slices.Clone(fim.skipped)
	return nil
}
