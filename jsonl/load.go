package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
)

// loader reads a session file into a memory index, doing the checks that
// need the whole tree: unique ids, parents and targets that exist, no
// cycles.
type loader struct {
	ctx      context.Context
	path     string
	mode     Mode
	maxLine  int // ReadOptions.MaxLineBytes
	onAppend func(context.Context, sessiontree.Entry) error
	state    *stateLinks

	mem    *memory.Storage
	header Header
	// lines holds each loaded entry's line number, by Seq-1.
	lines  []int32
	lastID string // the last entry loaded
	report Report
	// consumed counts the bytes read; lastByte is the last of them.
	consumed int64
	lastByte byte

	// fail is the first entry whose parent was not there when it was read
	// (outside Lenient mode). The rest of the file is read into later to
	// tell a missing parent from a cycle or a parent written after its
	// child.
	fail  *Record
	later map[string]laterEntry

	one [1]sessiontree.Entry // the batch handed to AppendBatch, reused
}

type laterEntry struct {
	parent string
	line   int
}

// countingReader counts the bytes read through it and keeps the last one.
type countingReader struct {
	r io.Reader
	l *loader
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.l.consumed += int64(n)
		c.l.lastByte = p[n-1]
	}
	return n, err
}

func (l *loader) load(r io.Reader) error {
	for rec, err := range read(l.ctx, &countingReader{r: r, l: l}, ReadOptions{Name: l.path, Mode: l.mode, MaxLineBytes: l.maxLine}, false) {
		if err != nil {
			if l.fail != nil {
				break // the first failure is the one to report
			}
			return err
		}
		l.report.Lines = rec.Next.Line
		switch rec.Kind {
		case KindHeader:
			if err := l.start(rec.Header); err != nil {
				return err
			}
		case KindEntry:
			if err := l.add(rec); err != nil {
				return err
			}
		case KindSkipped:
			l.report.Warnings = append(l.report.Warnings, rec.Err)
		case KindTorn:
			l.report.Warnings = append(l.report.Warnings, rec.Err)
			l.report.Torn = &TornTail{Line: rec.Line, Offset: rec.Offset, Size: len(rec.Data)}
			l.report.torn = rec.Data
		}
	}
	if l.fail != nil {
		return &LineError{Path: l.path, Line: l.fail.Line, Offset: l.fail.Offset, Err: l.classify()}
	}
	if l.mem == nil {
		return &LineError{Path: l.path, Line: 1, Err: corrupt("", "empty file: no session header")}
	}
	l.report.Entries = len(l.lines)
	unknown, err := l.mem.UnknownTypes(l.ctx)
	l.report.Unknown = unknown
	return err
}

func (l *loader) start(h Header) error {
	meta := h.SessionMeta
	meta.Version = CurrentVersion
	mem, err := memory.New(meta, memory.Options{OnAppend: l.onAppend})
	if err != nil {
		return fmt.Errorf("open %s: %w", l.path, err)
	}
	l.mem, l.header = mem, h
	l.report.Version = h.Version
	return nil
}

func (l *loader) lineError(rec Record, err error) *LineError {
	return &LineError{Path: l.path, Line: rec.Line, Offset: rec.Offset, Err: err}
}

// skip records a line dropped in Lenient mode, or returns its error.
func (l *loader) skip(rec Record, err error) error {
	lerr := l.lineError(rec, err)
	if l.mode != Lenient {
		return lerr
	}
	l.report.Warnings = append(l.report.Warnings, lerr)
	return nil
}

func (l *loader) add(rec Record) error {
	e := rec.Entry
	if l.fail != nil {
		if _, dup := l.later[e.ID]; !dup {
			l.later[e.ID] = laterEntry{parent: e.ParentID, line: rec.Line}
		}
		return nil
	}
	l.one[0] = e // AppendBatch copies it
	err := l.mem.AppendBatch(l.ctx, l.one[:])
	if err == nil {
		l.lines = append(l.lines, int32(rec.Line))
		e.Seq = int64(len(l.lines))
		var parentSeq int64
		switch {
		case e.ParentID == "":
		case e.ParentID == l.lastID:
			parentSeq = e.Seq - 1 // the usual case: a chain
		default:
			p, _ := l.mem.Entry(l.ctx, e.ParentID)
			parentSeq = p.Seq
		}
		l.state.add(e, parentSeq)
		l.lastID = e.ID
		return nil
	}
	if cerr := l.ctx.Err(); cerr != nil {
		return cerr
	}
	var inv *sessiontree.InvalidEntryError
	if errors.As(err, &inv) {
		return l.skip(rec, inv)
	}
	if prev, perr := l.mem.Entry(l.ctx, e.ID); perr == nil {
		first := l.lines[prev.Seq-1]
		if !bytes.Equal(prev.Raw, e.Raw) {
			return l.lineError(rec, corrupt(e.ID, "duplicate id with different content (first at line %d)", first))
		}
		return l.skip(rec, corrupt(e.ID, "duplicate of line %d", first))
	}
	var nf *sessiontree.EntryNotFoundError
	switch {
	case e.ParentID == e.ID:
		return l.skip(rec, corrupt(e.ID, "cycle in parent ids: the entry is its own parent"))
	case e.ParentID != "" && !l.exists(e.ParentID):
		if l.mode == Lenient {
			return l.skip(rec, corrupt(e.ID, "parent %s does not exist before this line", e.ParentID))
		}
		failed := rec // a copy: taking rec's address would move every record to the heap
		l.fail = &failed
		l.later = map[string]laterEntry{}
		return nil
	case errors.As(err, &nf):
		return l.skip(rec, corrupt(e.ID, "targetId %s does not exist", nf.ID))
	}
	// AppendBatch wraps the reason with the batch position, which means
	// nothing here: report the reason itself.
	if inner := errors.Unwrap(err); inner != nil {
		err = inner
	}
	return l.skip(rec, err)
}

func (l *loader) exists(id string) bool {
	_, err := l.mem.Entry(l.ctx, id)
	return err == nil
}

// classify explains why l.fail's parent was missing: it never appears, it
// appears later in the file, or following parents from it leads back in
// a cycle.
func (l *loader) classify() error {
	e := l.fail.Entry
	chain := []string{e.ID}
	seen := map[string]bool{e.ID: true}
	for cur := e.ParentID; ; {
		if seen[cur] {
			return corrupt(e.ID, "cycle in parent ids: %s", joinChain(append(chain, cur)))
		}
		le, ok := l.later[cur]
		if !ok {
			if l.exists(cur) {
				break // an earlier entry: the chain is only out of order
			}
			if cur == e.ParentID {
				return corrupt(e.ID, "parent %s does not exist", cur)
			}
			return corrupt(e.ID, "parent %s comes later in the file, and its ancestor %s does not exist", e.ParentID, cur)
		}
		seen[cur] = true
		chain = append(chain, cur)
		if le.parent == "" {
			break
		}
		cur = le.parent
	}
	return corrupt(e.ID, "parent %s comes after its child, at line %d", e.ParentID, l.later[e.ParentID].line)
}

func joinChain(ids []string) string {
	if len(ids) > 12 {
		ids = append(append(ids[:5:5], "..."), ids[len(ids)-5:]...)
	}
	return strings.Join(ids, " -> ")
}
