package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"sync"
	"unicode"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/fsx"
	"github.com/sessiontree/sessiontree/internal/jsonx"
	"github.com/sessiontree/sessiontree/internal/lines"
)

// Mode says how much damage a read tolerates.
type Mode int

const (
	// Recover, the zero Mode, refuses every bad line but a torn one, the
	// start of an entry that a crash in the middle of a write cut short.
	// A torn last line (without newline) ends the read: the entries
	// before it load and the torn bytes are reported. A torn line that a
	// newline ends (pi adds one when it opens such a file, and a resumed
	// session appends after it) is skipped as pi skips it, and reported.
	Recover Mode = iota
	// Strict refuses any damage: a bad line, a torn last line, a last line
	// without its newline.
	Strict
	// Lenient skips every bad line, as pi does, and reports each one. A
	// file without a valid header is still refused.
	Lenient
)

// String names the mode: "strict", "recover" or "lenient".
func (m Mode) String() string {
	switch m {
	case Recover:
		return "recover"
	case Strict:
		return "strict"
	case Lenient:
		return "lenient"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// DefaultMaxLineBytes, 256 MiB, is the longest line a read accepts when
// [ReadOptions.MaxLineBytes] (or [Options.MaxLineBytes]) is 0; the
// newline does not count. Lines of tens of megabytes (a large tool
// result, a screenshot) are normal; a line of hundreds of megabytes is
// not a session, but a file without newlines, or a stream of zeros. A
// longer line is refused with a [*LineError] whose Err is a
// [*LineTooLongError], as soon as the limit is passed: memory holds at
// most the limit of it.
const DefaultMaxLineBytes = 256 << 20

// ReadOptions configure [Read]. The zero value reads a whole file in
// [Recover] mode.
type ReadOptions struct {
	// Name is the file name used in errors.
	Name string
	// Mode is how much damage to tolerate.
	Mode Mode
	// Resume, when set, continues a read where an earlier one stopped:
	// pass the Next position of the last record it yielded, and a reader
	// positioned at Resume.Offset. No header record is yielded then.
	Resume *Position
	// MaxLineBytes bounds the length of one line, newline not counted;
	// 0 means [DefaultMaxLineBytes]. Memory use is bounded by it, not by
	// the file: a longer line is refused once this much of it is read.
	MaxLineBytes int
	// SizeHint, when positive, is about how many bytes the read will see
	// (a file's size less the resume offset): a read of a small input
	// then sets up small buffers, which counts when thousands of files
	// are read, as an import does. It does not limit the read. [ReadFile]
	// sets it from the file's size.
	SizeHint int64
}

// Position is where a read stands: everything a later read needs to
// resume after the lines already read, for a file that has grown since.
// It is plain data; store it as JSON if need be.
type Position struct {
	// Offset is the byte offset of the next line.
	Offset int64 `json:"offset"`
	// Line is the number of lines read so far, the header included.
	Line int `json:"line"`
	// Version is the file's version from its header.
	Version int `json:"version"`
	// SessionID is the header's id.
	SessionID string `json:"sessionId"`
	// Index counts the JSON lines read so far, the header being 0; a
	// version-1 file's compactions refer to entries by this index.
	Index int `json:"index"`
	// Prev is the id of the last entry yielded from a version-1 file,
	// whose entries are linked in file order.
	Prev string `json:"prev,omitempty"`
}

// RecordKind tells what a [Record] holds.
type RecordKind int

// The kinds of records [Read] yields.
const (
	// KindHeader is the header line; it comes first.
	KindHeader RecordKind = iota + 1
	// KindEntry is an entry, migrated to the current version.
	KindEntry
	// KindSkipped is a bad line skipped: any in [Lenient] mode, a torn
	// line ended by a newline in [Recover] mode too; Err says why.
	KindSkipped
	// KindTorn is a torn last line (not in [Strict] mode); Data holds its
	// bytes and Next points at its start, so that a resumed read tries it
	// again once the writer has finished it. It is always the last record.
	KindTorn
)

// Record is one line of a session file as [Read] yields it.
type Record struct {
	Kind RecordKind
	// Line is the 1-based line number.
	Line int
	// Offset is the byte offset of the line's first byte.
	Offset int64
	// Header is set for KindHeader.
	Header Header
	// Entry is set for KindEntry.
	Entry sessiontree.Entry
	// Err is set for KindSkipped and KindTorn.
	Err *LineError
	// Data is a copy of the line's bytes for KindSkipped and KindTorn.
	Data []byte
	// Next is where a resumed read would continue after this record.
	Next Position
}

// Read reads a session file from r line by line and yields its header,
// then its entries, migrated to version 3 (see the package doc), with
// their line numbers and byte offsets. It checks each line on its own
// (valid JSON, required fields: [ParseLine]); checks that need the whole
// tree (unique ids, existing parents) are the consumer's, as
// [Open] does them. Blank lines are skipped.
//
// A goroutine reads and parses ahead of the consumer, by batches of up to
// 256 records or a megabyte, at most two batches ahead, so memory is
// bounded by a few megabytes or a few of the longest lines, never by the
// file; it has stopped reading r when the sequence ends, early or not.
// The sequence stops after the first error, which
// is a [*LineError] for bad input (a missing or malformed header, an
// unsupported version, a bad line the mode does not skip) or wraps
// [sessiontree.ErrStorage] when r fails. The context is checked every
// 1024 lines.
func Read(ctx context.Context, r io.Reader, opts ReadOptions) iter.Seq2[Record, error] {
	return read(ctx, r, opts, true)
}

// read is Read; validate false leaves out [sessiontree.Entry.Validate] for
// a consumer that validates anyway (a memory index does).
func read(ctx context.Context, r io.Reader, opts ReadOptions, validate bool) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		rd := &reader{
			lines:    lines.NewReader(r, readBufferFor(opts.SizeHint), maxLine(opts.MaxLineBytes)),
			opts:     opts,
			validate: validate,
		}
		readAhead(ctx, rd, yield)
	}
}

// maxLine is the line limit for a MaxLineBytes option.
func maxLine(opt int) int {
	if opt <= 0 {
		return DefaultMaxLineBytes
	}
	return opt
}

// Read-ahead bounds: a batch is sent when it holds this many records or
// bytes, and this many batches may wait for the consumer.
const (
	batchRecords  = 256
	batchBytes    = 1 << 20
	batchesQueued = 2
)

// The read buffer holds this many bytes, fewer for a small input; a line
// longer than it is gathered in a buffer of its own.
const (
	readBuffer    = 256 << 10
	minReadBuffer = 4 << 10
)

// readBufferFor returns the size of the read buffer for an input of
// about hint bytes (unknown when hint <= 0).
func readBufferFor(hint int64) int {
	if hint <= 0 {
		return readBuffer
	}
	return int(min(max(hint, minReadBuffer), readBuffer))
}

type item struct {
	rec Record
	err error
}

// readAhead runs the reader in its own goroutine, which reads and parses
// lines while the consumer (typically indexing them) works on the
// previous ones: on two cores, opening a large file takes about half the
// time. Memory stays bounded: at most a few batches of about a megabyte,
// or of a few records when lines are longer. When the consumer stops
// early, readAhead waits for the goroutine to finish the read in progress.
func readAhead(ctx context.Context, rd *reader, yield func(Record, error) bool) {
	batches := make(chan []item, batchesQueued)
	// Batches come back through free once read, so a long file does not
	// allocate a batch per few hundred lines.
	free := make(chan []item, batchesQueued+2)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(batches)
		fresh := func() []item {
			select {
			case b := <-free:
				return b
			default:
				// Grown by append: a small file's batch stays small
				// (a full one is tens of KB), a long file's batches
				// reach full size once and are then reused.
				return make([]item, 0, 16)
			}
		}
		cur := fresh()
		size := 0
		send := func() bool {
			select {
			case batches <- cur:
				cur, size = fresh(), 0
				return true
			case <-done:
				return false
			}
		}
		rd.run(ctx, func(rec Record, err error) bool {
			cur = append(cur, item{rec, err})
			size += len(rec.Entry.Raw) + len(rec.Data) + len(rec.Header.Raw)
			if err != nil || len(cur) >= batchRecords || size >= batchBytes {
				return send()
			}
			return true
		})
		if len(cur) > 0 {
			send()
		}
	}()
	defer func() {
		close(done)
		wg.Wait()
	}()
	for b := range batches {
		for _, it := range b {
			if !yield(it.rec, it.err) {
				return
			}
		}
		clear(b) // drop the references; the consumer has its copies
		select {
		case free <- b[:0]:
		default:
		}
	}
}

// ReadFile is [Read] over the file at path. With opts.Resume it starts
// reading at Resume.Offset. The file is closed when the sequence ends. A
// path that names something other than a regular file (a named pipe, a
// device, a directory) yields a [*sessiontree.NotRegularFileError]
// before anything is read from it.
func ReadFile(ctx context.Context, path string, opts ReadOptions) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		f, err := openFile(path, os.O_RDONLY)
		if err != nil {
			yield(Record{}, err)
			return
		}
		defer f.Close()
		if opts.Resume != nil {
			if _, err := f.Seek(opts.Resume.Offset, io.SeekStart); err != nil {
				yield(Record{}, fmt.Errorf("seek %s: %w: %w", path, sessiontree.ErrStorage, err))
				return
			}
		}
		if opts.Name == "" {
			opts.Name = path
		}
		if fi, err := f.Stat(); err == nil && opts.SizeHint <= 0 {
			opts.SizeHint = fi.Size()
			if opts.Resume != nil {
				opts.SizeHint -= opts.Resume.Offset
			}
		}
		for rec, err := range Read(ctx, f, opts) {
			if !yield(rec, err) {
				return
			}
		}
	}
}

// openFile opens the session file at path with flag, refusing anything
// but a regular file before reading it (a named pipe would block the
// read, /dev/zero never end it) with a
// [*sessiontree.NotRegularFileError].
func openFile(path string, flag int) (*os.File, error) {
	f, err := fsx.Open(path, flag, "session file")
	if err != nil {
		return nil, openError(path, err)
	}
	return f, nil
}

// openError is the error of opening the file at path: the sentinel for
// it ([sessiontree.ErrNotFound] or [sessiontree.ErrStorage]) and the
// system's *fs.PathError, which names the step and the path, once. A
// [*sessiontree.NotRegularFileError] names the path itself and is
// returned as it is.
func openError(path string, err error) error {
	var nr *sessiontree.NotRegularFileError
	if errors.As(err, &nr) {
		return err
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		err = &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", sessiontree.ErrNotFound, err)
	}
	return fmt.Errorf("%w: %w", sessiontree.ErrStorage, err)
}

type reader struct {
	lines    *lines.Reader
	opts     ReadOptions
	validate bool
	pos      Position
	ids      v1IDs
}

// readLine returns the next line, its newline included when it has one.
// The slice is valid until the next call. It returns io.EOF at the end
// and lines.ErrTooLong for a line over the limit.
func (r *reader) readLine() ([]byte, error) { return r.lines.Next() }

func (r *reader) lineError(start Position, err error) *LineError {
	return &LineError{Path: r.opts.Name, Line: start.Line + 1, Offset: start.Offset, Err: err}
}

func (r *reader) ioError(err error) error {
	name := r.opts.Name
	if name == "" {
		name = "session file"
	}
	return fmt.Errorf("read %s: %w: %w", name, sessiontree.ErrStorage, err)
}

func (r *reader) run(ctx context.Context, yield func(Record, error) bool) {
	if r.opts.Resume != nil {
		p := *r.opts.Resume
		if p.Version < 1 || p.Version > CurrentVersion || p.Offset < 0 || p.Line < 1 || p.SessionID == "" {
			yield(Record{}, fmt.Errorf("resume %s: position %+v is not one a read returned", r.opts.Name, p))
			return
		}
		r.pos = p
	} else if !r.header(ctx, yield) {
		return
	}
	r.ids = newV1IDs(r.pos.SessionID)
	for n := 0; ; n++ {
		if n%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				yield(Record{}, err)
				return
			}
		}
		start := r.pos
		line, err := r.readLine()
		if err == io.EOF {
			return
		}
		if err != nil {
			if err == lines.ErrTooLong {
				yield(Record{}, r.lineError(start, &LineTooLongError{Limit: r.lines.Max()}))
			} else {
				yield(Record{}, r.ioError(err))
			}
			return
		}
		r.pos.Offset += int64(len(line))
		r.pos.Line++
		hasNewline := line[len(line)-1] == '\n'
		trimmed, blank := lineJSON(line)
		if blank {
			continue
		}
		rec := Record{Line: start.Line + 1, Offset: start.Offset}
		if !hasNewline {
			if Torn(line) {
				r.torn(start, trimmed, rec, yield)
				return
			}
			if r.opts.Mode == Strict {
				yield(Record{}, r.lineError(start, corrupt("", "last line has no newline")))
				return
			}
		}
		e, err := r.entry(trimmed)
		if err != nil {
			lerr, skip := r.badLine(start, trimmed, err)
			if !skip {
				yield(Record{}, lerr)
				return
			}
			rec.Kind, rec.Err, rec.Data, rec.Next = KindSkipped, lerr, bytes.Clone(trimmed), r.pos
			if !yield(rec, nil) {
				return
			}
			continue
		}
		rec.Kind, rec.Entry, rec.Next = KindEntry, e, r.pos
		if !yield(rec, nil) {
			return
		}
	}
}

// header reads lines up to the first non-blank one and yields it as the
// header. It reports whether reading goes on.
func (r *reader) header(ctx context.Context, yield func(Record, error) bool) bool {
	for {
		if err := ctx.Err(); err != nil {
			yield(Record{}, err)
			return false
		}
		start := r.pos
		line, err := r.readLine()
		switch {
		case err == io.EOF:
			yield(Record{}, r.lineError(start, corrupt("", "empty file: no session header")))
			return false
		case err == lines.ErrTooLong:
			yield(Record{}, r.lineError(start, &LineTooLongError{Limit: r.lines.Max()}))
			return false
		case err != nil:
			yield(Record{}, r.ioError(err))
			return false
		}
		r.pos.Offset += int64(len(line))
		r.pos.Line++
		trimmed, blank := lineJSON(line)
		if blank {
			continue
		}
		h, err := ParseHeader(trimmed)
		if err != nil {
			yield(Record{}, r.lineError(start, err))
			return false
		}
		if line[len(line)-1] != '\n' && r.opts.Mode == Strict {
			yield(Record{}, r.lineError(start, corrupt("", "last line has no newline")))
			return false
		}
		r.pos.Version, r.pos.SessionID, r.pos.Index = h.Version, h.ID, 0
		return yield(Record{Kind: KindHeader, Line: start.Line + 1, Offset: start.Offset, Header: h, Next: r.pos}, nil)
	}
}

// lineJSON returns a line's JSON text, the line less the white space JSON
// allows around a value (trimJSONSpace), and whether the line is blank:
// white space alone as Unicode or JavaScript sees it, which pi skips (a
// line JavaScript's trim empties, a byte order mark or a no-break space
// alone; a NEL alone is no JSON to it, which it skips too). Other space
// around the JSON, a no-break space or a vertical tab, is no JSON: pi's
// JSON.parse refuses the line and pi drops the entry in it
// (testdata/piedge/line-unicode-space), so it is a bad line here too.
func lineJSON(line []byte) (trimmed []byte, blank bool) {
	return trimJSONSpace(line), Blank(line)
}

// Blank reports whether a line is blank, white space alone as Unicode or
// JavaScript sees it: a read skips it, as pi does.
func Blank(line []byte) bool { return len(bytes.TrimFunc(line, isBlankSpace)) == 0 }

// Torn reports whether line, a file's last line without its newline, is
// torn: neither blank nor JSON, as [lineJSON] reads it. A read stops
// before such a line; the store's import asks the same of that line when
// it resumes there and a newline has ended it since.
func Torn(line []byte) bool {
	trimmed, blank := lineJSON(line)
	return !blank && jsonx.Valid(trimmed) != nil
}

// isBlankSpace reports whether a line of r alone is blank to pi.
func isBlankSpace(r rune) bool { return r == '\uFEFF' || unicode.IsSpace(r) }

// torn yields the torn last line, or the error for it in Strict mode.
func (r *reader) torn(start Position, data []byte, rec Record, yield func(Record, error) bool) {
	lerr := r.lineError(start, corrupt("", "torn last line: %d bytes without newline that are not JSON", len(data)))
	if r.opts.Mode == Strict {
		yield(Record{}, lerr)
		return
	}
	// The line is not consumed: a resumed read starts at it again.
	r.pos = start
	rec.Kind, rec.Err, rec.Data, rec.Next = KindTorn, lerr, bytes.Clone(data), start
	yield(rec, nil)
}

// badLine returns the error of a line that is no entry, the error err,
// and whether the mode skips it. Lenient skips every such line. Recover
// skips a torn line only (tornLine): a write a crash cut short, which the
// next writer ended with a newline (pi does so when it opens the file)
// and wrote its entries after. It was never committed, pi skips it, and
// the entries after it chain onto the ones before it; refusing it would
// refuse the whole session of anyone whose agent crashed once. Any other
// bad line (a merge marker, a line that is whole JSON but no entry) is
// not what a crash leaves, and Recover refuses it as Strict does.
func (r *reader) badLine(start Position, line []byte, err error) (*LineError, bool) {
	if r.opts.Mode != Strict && tornLine(line) {
		return r.lineError(start, corrupt("", "torn line: %d bytes of an entry cut short, ended by a newline written later; skipped, as pi skips it", len(line))), true
	}
	return r.lineError(start, err), r.opts.Mode == Lenient
}

// tornLine reports whether a line that is no entry is what a write cut
// short leaves: the start of a JSON object that ends too soon
// ([jsonx.Unfinished]), maybe followed by NUL bytes, or NUL bytes alone
// (a crash of the machine may leave the blocks of the file's end
// unwritten, read back as zeros).
func tornLine(line []byte) bool {
	line = bytes.TrimRight(line, "\x00")
	return len(line) == 0 || line[0] == '{' && jsonx.Unfinished(line)
}

// entry parses an entry line and migrates it to the current version.
func (r *reader) entry(line []byte) (sessiontree.Entry, error) {
	switch r.pos.Version {
	case 1:
		if jsonx.Valid(line) != nil || jsonx.Falsy(line) {
			// pi drops lines that are not JSON, or whose value is false
			// in JavaScript (null, false, 0, ""), before it numbers
			// entries.
			return ParseLine(line)
		}
		r.pos.Index++
		e, err := parseV1(line, r.ids, r.pos.Index, r.pos.Prev)
		if err != nil {
			return sessiontree.Entry{}, err
		}
		r.pos.Prev = e.ID
		return migrateV2(e), nil
	case 2:
		e, err := r.parse(line)
		if err != nil {
			return sessiontree.Entry{}, err
		}
		return migrateV2(e), nil
	default:
		return r.parse(line)
	}
}

// parse parses a version-3 entry line. A line the line reader handed
// over (a long one) becomes the entry's Raw without a copy.
func (r *reader) parse(line []byte) (sessiontree.Entry, error) {
	own := r.lines.Own()
	if r.validate {
		return parseLine(line, own)
	}
	e, err := decodeEntry(line, own)
	if err == nil && e.Type == "session" {
		err = secondHeader(e.ID)
	}
	return e, err
}
