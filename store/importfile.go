package store

// Reading a pi file for an import, incrementally: the walk from where the
// last import ended (resuming the JSONL reader), the checks of each entry
// against the ones before it, the SHA-256 of the file's imported prefix.
// This is the reader stage; importplan.go's passes consume what it yields.

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/maphash"
	"io"
	"maps"
	"math"
	"os"
	"slices"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// storedRaw returns a reader of the JSON of an entry of session sid (the
// file's) as stored. It reads nothing of fim but the store, so a walk
// may run beside the writer's commits (commit).
func (fim *fileImport) storedRaw(sid string) func(id string) (string, error) {
	return func(id string) (string, error) {
		var out string
		err := fim.s.d.View(fim.ctx, func(tx sessiontree.DatabaseTx) (err error) {
			out, err = tx.EntryRaw(sid, id)
			return err
		})
		return out, err
	}
}

// walk reads the file from the import's start (up to limit bytes of it,
// or all when limit < 0) and calls visit with each record to consume:
// an entry to append (skip == nil) or a damaged line the mode tolerates.
// Damage the mode refuses ends the walk with an outcomeError. When tee is
// not nil, the bytes read go through it, to be hashed.
func (fim *fileImport) walk(limit int64, tee *prefixHash, visit func(r jsonl.Record, skip *jsonl.LineError) error) error {
	ctx := fim.ctx
	known, raw := knownIDs(maps.Clone(fim.seed)), fim.storedRaw(fim.rec.SessionID)
	storable := storableBy(fim.s.d)
	n, hint := int64(math.MaxInt64-fim.start), fim.fi.Size()-fim.start
	if limit >= 0 {
		n, hint = limit, limit
	}
	var file io.ReaderAt = fim.f
	if fim.tune.readFile != nil {
		file = fim.tune.readFile(fim.f)
	}
	var src io.Reader = io.NewSectionReader(file, fim.start, n)
	if tee != nil {
		tee.r, src = src, tee
	}
	for r, err := range jsonl.Read(ctx, src, jsonl.ReadOptions{Name: fim.path, Mode: fim.mode, Resume: fim.from, SizeHint: hint, MaxLineBytes: fim.maxLine}) {
		if err != nil {
			var le *jsonl.LineError
			if errors.As(err, &le) {
				return &outcomeError{OutcomeFailed, err}
			}
			return err
		}
		var skip *jsonl.LineError
		switch r.Kind {
		case jsonl.KindEntry:
			if skip, err = fim.entryLine(r, known, raw, storable); err != nil {
				return err
			}
		case jsonl.KindSkipped, jsonl.KindTorn:
			skip = r.Err
		}
		if err := visit(r, skip); err != nil {
			return err
		}
	}
	return nil
}

// entryLine checks the entry a line of the file holds before the import
// writes it: against the entries before it (checkEntry; known, which
// takes it), and against what the database can store (storable, nil when
// it takes any entry). It returns the line as damage to skip, or an
// outcomeError ending the file's import: damage the mode refuses, or an
// entry the database cannot store, named with the file's line before any
// of the file is written.
func (fim *fileImport) entryLine(r jsonl.Record, known knownIDs, raw func(id string) (string, error), storable func(sessiontree.Entry) error) (*jsonl.LineError, error) {
	e := r.Entry
	fim.longest = max(fim.longest, len(e.Raw))
	if storable != nil {
		if err := storable(e); err != nil {
			return nil, &outcomeError{OutcomeFailed, &jsonl.LineError{Path: fim.path, Line: r.Line, Offset: r.Offset, Err: err}}
		}
	}
	sum := rawHash(e.Raw)
	if why, fatal := checkEntry(e, sum, known, raw); why != "" {
		skip := &jsonl.LineError{Path: fim.path, Line: r.Line, Offset: r.Offset, Err: &sessiontree.CorruptError{EntryID: e.ID, Reason: why}}
		if fim.mode != jsonl.Lenient || fatal {
			return nil, &outcomeError{OutcomeFailed, skip}
		}
		return skip, nil
	}
	known[e.ID] = sum
	return nil, nil
}

// storableBy returns the check of an entry d makes before it stores one
// ([sessiontree.EntryChecker]), nil when d takes any entry.
func storableBy(d sessiontree.Database) func(sessiontree.Entry) error {
	if c, ok := d.(sessiontree.EntryChecker); ok {
		return c.CheckEntry
	}
	return nil
}

// note takes into the file's result what one record of the read that
// checks the file tells: a damaged line the mode tolerates (skip), or an
// entry to import, whose type may be one this version does not know.
func (fim *fileImport) note(r jsonl.Record, skip *jsonl.LineError) {
	switch {
	case skip != nil:
		fim.res.Problems = append(fim.res.Problems, skip)
		if r.Kind == jsonl.KindTorn {
			fim.res.Torn = skip
		}
	case r.Kind == jsonl.KindEntry:
		fim.res.Unknown.Note(r.Entry.Type)
		if !r.Entry.Type.Known() {
			fim.unknownAt = append(fim.unknownAt, unknownAt{r.Offset, r.Entry.Type})
		}
	}
}

// restart forgets what an earlier read noted: the read starts again.
func (fim *fileImport) restart() {
	fim.res.Problems, fim.res.Torn, fim.res.Unknown, fim.unknownAt = slices.Clone(fim.skipped), nil, nil, nil
}

// headerRead refuses a new file whose read ended without a header.
func (fim *fileImport) headerRead() error {
	if !fim.found && fim.meta.ID == "" {
		return &outcomeError{OutcomeFailed, fmt.Errorf("%s: no session header", fim.path)}
	}
	return nil
}

// dropBatch empties a batch of entries that are stored, for the next
// ones: it lets go of their JSON, which SQLite has copied, instead of
// holding it in the batch's array until the next entries overwrite it.
func dropBatch(batch []sessiontree.Entry) []sessiontree.Entry {
	clear(batch)
	return batch[:0]
}

// resumeAt is the reader's position where this import starts.
func (fim *fileImport) resumeAt() jsonl.Position {
	if fim.from != nil {
		return *fim.from
	}
	return jsonl.Position{}
}

// prefixHash returns the hash of the file's bytes for a read from the
// import's start: it begins with the state after the bytes before it.
func (fim *fileImport) prefixHash() *prefixHash {
	return newPrefixHash(nil, cloneHash(fim.h), fim.start)
}

// checkEntry does the checks of the engine's batch append that need the
// session's ids, so that a bad entry is reported with its line (and
// skipped in lenient mode) instead of failing the batch. It returns why
// the entry may not be appended ("" when it may), and whether that is
// fatal in every mode: as in the JSONL reader, an exact duplicate of an
// earlier line is a skippable warning, an id used by a different entry
// is not. sum is the entry's rawHash; raw reads a stored entry's JSON.
func checkEntry(e sessiontree.Entry, sum uint64, known knownIDs, raw func(id string) (string, error)) (string, bool) {
	if prev, dup := known[e.ID]; dup {
		same := prev == sum
		if prev == 0 {
			r, err := raw(e.ID)
			same = err == nil && r == string(e.Raw)
		}
		if same {
			return "duplicate of an earlier line", false
		}
		return "duplicate id with different content", true
	}
	if err := sessiontree.CheckParent(e, known); err != nil {
		return "parent " + e.ParentID + " does not exist before this line", false
	}
	f := sessiontree.EffectsOf(e, "")
	if err := sessiontree.CheckTarget(&f, known); err != nil {
		return "targetId " + f.Target + " does not exist before this line", false
	}
	return "", false
}

// knownIDs are the ids of a session's entries before the line an import
// checks, each with its entry's rawHash (0: stored before this import).
// It is the root replay's [sessiontree.Earlier] over them.
type knownIDs = sessiontree.EarlierMap[uint64]

// rawSeed seeds rawHash. The hashes live only as long as one import, so
// a seed drawn at start-up serves.
var rawSeed = maphash.MakeSeed()

// rawHash is a 64-bit hash of an entry's JSON, never 0 (which checkEntry
// reads as "stored before this import"). maphash runs at memory speed;
// the import hashes every entry it reads.
func rawHash(b []byte) uint64 {
	return maphash.Bytes(rawSeed, b) | 1
}

// checkPrefix checks that the file's first rec.ImportedBytes bytes are
// the ones imported, and that pi still reads them as the lines imported
// (runOn), and returns the hash state after them.
func checkPrefix(f *os.File, rec record, size int64) (hash.Hash, error) {
	if size < rec.ImportedBytes {
		return nil, conflict("the file has %d bytes, fewer than the %d already imported into session %s", size, rec.ImportedBytes, rec.SessionID)
	}
	h := sha256.New()
	last := &lastByte{w: h}
	if _, err := io.Copy(last, io.NewSectionReader(f, 0, rec.ImportedBytes)); err != nil {
		return nil, &outcomeError{OutcomeFailed, fmt.Errorf("hash: %w", err)}
	}
	if hex.EncodeToString(h.Sum(nil)) != rec.PrefixSHA256 {
		return nil, conflict("the %d bytes already imported into session %s have changed since", rec.ImportedBytes, rec.SessionID)
	}
	if last.b != '\n' && rec.ImportedBytes > 0 {
		if err := runOn(f, rec); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// runOn checks the bytes after the imported ones when those end in a
// line without its newline (a last line that is a whole entry, which
// Recover mode imports, as pi reads it). pi 1.6 adds the newline when it
// opens the file; a writer that does not runs its next line into that
// one, and pi then reads one malformed line and skips it, both entries:
// the store, which holds the first, no longer agrees with the file, a
// conflict, as a changed prefix is. Blanks before the newline keep the
// line as it was.
func runOn(f *os.File, rec record) error {
	r := bufio.NewReaderSize(io.NewSectionReader(f, rec.ImportedBytes, math.MaxInt64-rec.ImportedBytes), 512)
	for {
		b, err := r.ReadByte()
		switch {
		case err == io.EOF || err == nil && b == '\n':
			return nil
		case err != nil:
			return &outcomeError{OutcomeFailed, fmt.Errorf("read: %w", err)}
		case b != ' ' && b != '\t' && b != '\r':
			return conflict("the last line imported into session %s had no newline, and the writer ran its next line into it at byte %d: pi skips the merged line, and with it an entry the store holds",
				rec.SessionID, rec.ImportedBytes)
		}
	}
}

// lastByte writes through to w and keeps the last byte written.
type lastByte struct {
	w io.Writer
	b byte
}

// Write writes p to w.
func (l *lastByte) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l.b = p[len(p)-1]
	}
	return l.w.Write(p)
}
