package sessiontree

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The search text of an entry: what a search index holds of it, the
// same on every engine, computed by one walk of its JSON.
//
// The rules are those of the SQLite engine's first search_text view
// (its migration 10, with SQLite's JSON functions), kept exactly so that
// the text of every entry, and so every index, is unchanged: the walk
// goes over the entry's bytes once, in place, skipping what it does not
// take and copying no more than the cap (see [SearchText]).

// SearchTextLimit is how much of an entry's text the search index holds:
// its first 1 MiB, in bytes.
const SearchTextLimit = 1 << 20

// ErrSearchTextJSON is the error of SearchText for an entry whose JSON is
// malformed where the walk reads it.
var ErrSearchTextJSON = errors.New("malformed entry JSON")

// SearchText returns the text the search index takes of an entry of type
// typ and JSON raw, cut to its first SearchTextLimit bytes (which may end
// inside a character), and false when it has none (the view has no row
// for it when the text is empty too). The text joins, with newlines, the
// parts of:
//
//   - a message: each item of message.content (a string; or a block,
//     an object, whose type is "text" (its text), "thinking" (its
//     thinking) or "toolCall" (the strings of its arguments, at any depth,
//     joined by spaces)), then message.command and message.output;
//   - a custom_message: each item of content (a string, or a "text"
//     block's text);
//   - a compaction or branch_summary: summary; a session_info: name.
//
// A part that is a JSON number, boolean, object or array counts as SQLite's
// json_extract gives it as text (1.5, 1 for true, compact JSON), a null or
// missing one not at all, nor does an empty one (nor an empty argument
// string: no separator is added for it); a content that is one object
// counts its members as items, a string as one item. Of duplicated keys
// the first counts.
func SearchText(typ string, raw []byte) (string, bool, error) {
	text, ok, err := AppendSearchText(nil, typ, raw)
	return string(text), ok, err
}

// IndexedText is the text a search index holds of an entry whose
// [SearchText] is text, the same on every engine: each NUL a space
// ([DerivedText]: PostgreSQL's text holds no NUL) and the bytes that are
// not UTF-8 (which a lone surrogate's escape, \ud800, decodes to) left
// out (PostgreSQL's text holds none either). Search finds, ranks and
// cuts snippets from this text, not from the entry's JSON.
func IndexedText(text string) string {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "")
	}
	return DerivedText(text)
}

// AppendSearchText appends the [SearchText] of an entry to dst and
// returns the extended slice, for an engine that encodes the text further
// without copying it into a string first.
func AppendSearchText(dst []byte, typ string, raw []byte) ([]byte, bool, error) {
	return appendSearchText(dst, typ, raw, SearchTextLimit)
}

// HasSearchText reports whether an entry has search text ([SearchText]'s
// ok, so whether a search index holds a document for it), walking its
// JSON only up to the text's first byte.
func HasSearchText(typ string, raw []byte) (bool, error) {
	_, ok, err := appendSearchText(nil, typ, raw, 1)
	return ok, err
}

// appendSearchText is AppendSearchText with the text cut at limit bytes.
func appendSearchText(dst []byte, typ string, raw []byte, limit int) ([]byte, bool, error) {
	w := textWalk{src: raw, out: textOut{buf: dst, limit: len(dst) + limit}}
	var err error
	switch typ {
	case "message":
		err = w.message()
	case "custom_message":
		err = w.items(w.path("content"), false)
	case "compaction", "branch_summary":
		err = w.scalarPart(w.path("summary"))
	case "session_info":
		err = w.scalarPart(w.path("name"))
	default:
		return dst, false, nil
	}
	if errors.Is(err, errFull) {
		err = nil
	}
	if err = cmp.Or(err, w.err); err != nil {
		return dst, false, err
	}
	return w.out.buf, w.out.any, nil
}

// errFull stops the walk once the text has reached its cap.
var errFull = errors.New("search text full")

// textOut is the text being made: parts joined by newlines, cut at limit.
// A part or argument that is empty counts as none, without a separator,
// as in migration 10's view (where SQLite's substr of an empty blob is
// NULL, which group_concat skips).
type textOut struct {
	buf      []byte
	limit    int
	any      bool   // a part had text
	partText bool   // the current part has text
	sep      []byte // owed before the next byte of text
}

// startPart begins a part, after a newline if one came before with text.
func (o *textOut) startPart() error {
	o.partText = false
	o.sep = nil
	if o.any {
		o.sep = []byte{'\n'}
	}
	return o.full()
}

// startArg begins a tool call's argument within its part, after a space
// if one came before with text.
func (o *textOut) startArg() {
	if o.partText {
		o.sep = []byte{' '}
	}
}

// write appends b, after the separator owed, cut at the cap; errFull once
// the cap is reached.
func (o *textOut) write(b []byte) error {
	if len(b) == 0 {
		return o.full()
	}
	if o.sep != nil {
		o.append(o.sep)
		o.sep = nil
	}
	o.any, o.partText = true, true
	o.append(b)
	return o.full()
}

// append appends b, cut at the cap.
func (o *textOut) append(b []byte) {
	if room := o.limit - len(o.buf); len(b) > room {
		b = b[:room]
	}
	o.buf = append(o.buf, b...)
}

// full is errFull when the text has reached its cap.
func (o *textOut) full() error {
	if len(o.buf) >= o.limit {
		return errFull
	}
	return nil
}

// textWalk walks an entry's JSON src by offsets. err is the first error
// of a lookup (member), which returns -1 then.
type textWalk struct {
	src []byte
	out textOut
	err error
	esc [4]byte // an escape's bytes, decoded
}

// message adds a message's parts: its content's items, command, output.
func (w *textWalk) message() error {
	msg := w.path("message")
	if err := w.items(w.member(msg, "content"), true); err != nil {
		return err
	}
	if err := w.scalarPart(w.member(msg, "command")); err != nil {
		return err
	}
	return w.scalarPart(w.member(msg, "output"))
}

// path is the offset of the value of key in the entry's top object, or -1.
func (w *textWalk) path(key string) int {
	return w.member(w.skipSpace(0), key)
}

// items adds a content's items (at offset at, -1 for none): each element
// of an array, each member of an object, or the one value; message says
// whether thinking and tool-call blocks count (they do in a message).
func (w *textWalk) items(at int, message bool) error {
	if at < 0 {
		return nil
	}
	switch w.src[at] {
	case '[':
		return w.each(at, func(_ string, v int) error { return w.item(v, v, message) })
	case '{':
		// SQLite finds an object member's block by its key: the first
		// member of that key, whose type and text then count.
		return w.each(at, func(key string, v int) error { return w.item(v, w.member(at, key), message) })
	}
	return w.item(at, at, message)
}

// item adds one content item at v: a string, or a block; byKey is where
// the block's type and text are read (the item itself, but for a member
// of an object, the first member of its key), v where its arguments are.
func (w *textWalk) item(v, byKey int, message bool) error {
	switch w.src[v] {
	case '"':
		if err := w.out.startPart(); err != nil {
			return err
		}
		_, err := w.str(v, true)
		return err
	case '{':
		switch w.stringAt(w.member(byKey, "type")) {
		case "text":
			return w.scalarPart(w.member(byKey, "text"))
		case "thinking":
			if message {
				return w.scalarPart(w.member(byKey, "thinking"))
			}
		case "toolCall":
			if message {
				return w.argumentStrings(w.member(v, "arguments"))
			}
		}
	}
	return nil
}

// argumentStrings adds, as one part, the strings at any depth of the value
// at offset at (-1 for none), in order, joined by spaces; no part when
// there are none.
func (w *textWalk) argumentStrings(at int) error {
	if at < 0 {
		return nil
	}
	if err := w.out.startPart(); err != nil {
		return err
	}
	var walk func(v int) error
	walk = func(v int) error {
		switch w.src[v] {
		case '"':
			w.out.startArg()
			_, err := w.str(v, true)
			return err
		case '[', '{':
			return w.each(v, func(_ string, e int) error { return walk(e) })
		}
		return nil
	}
	return walk(at)
}

// scalarPart adds the value at offset at as json_extract gives it as text:
// a string decoded, a number as SQLite writes it, true and false as 1 and
// 0, an object or array as compact JSON; null or missing (at < 0) adds
// nothing.
func (w *textWalk) scalarPart(at int) error {
	if at < 0 || w.src[at] == 'n' {
		return nil
	}
	if err := w.out.startPart(); err != nil {
		return err
	}
	switch c := w.src[at]; {
	case c == '"':
		_, err := w.str(at, true)
		return err
	case c == 't':
		return w.out.write([]byte{'1'})
	case c == 'f':
		return w.out.write([]byte{'0'})
	case c == '{' || c == '[':
		end, err := w.skip(at)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := json.Compact(&b, w.src[at:end]); err != nil {
			return fmt.Errorf("%w: at byte %d: %v", ErrSearchTextJSON, at, err)
		}
		return w.out.write(b.Bytes())
	}
	end, err := w.skip(at)
	if err != nil {
		return err
	}
	return w.out.write([]byte(sqliteNumber(string(w.src[at:end]))))
}

// sqliteNumber is the text SQLite gives a JSON number json_extract reads:
// an integer that fits 64 bits as it is, any other as a real, which
// SQLite writes with 15 significant digits, or 17 when 15 do not give the
// number back, and always with a point.
func sqliteNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return lit
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return "Inf"
		}
		return "-Inf"
	}
	s := strconv.FormatFloat(f, 'g', 15, 64)
	if back, _ := strconv.ParseFloat(s, 64); back != f {
		s = strconv.FormatFloat(f, 'g', 17, 64)
	}
	mant, exp, hasExp := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	} else {
		mant = strings.TrimRight(mant, "0")
		if strings.HasSuffix(mant, ".") {
			mant += "0"
		}
	}
	if hasExp {
		return mant + "e" + exp
	}
	return mant
}

// stringAt is the decoded string at offset at, or "" when it is not a
// string (or at < 0). It is for short values: a block's type.
func (w *textWalk) stringAt(at int) string {
	if at < 0 || w.src[at] != '"' {
		return ""
	}
	end, err := w.skip(at)
	if err != nil || end-at > 64 {
		return ""
	}
	var k textWalk
	k.src = w.src[at:end]
	k.out.limit = math.MaxInt
	if _, err := k.str(0, true); err != nil {
		return ""
	}
	return string(k.out.buf)
}

// member is the offset of the value of the first member key of the object
// at offset obj, or -1 when obj is not an object (or is -1) or has none.
func (w *textWalk) member(obj int, key string) int {
	if obj < 0 || obj >= len(w.src) || w.src[obj] != '{' {
		return -1
	}
	found := -1
	err := w.each(obj, func(k string, v int) error {
		if k == key {
			found = v
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		w.err = cmp.Or(w.err, err)
		return -1
	}
	return found
}

// errFound stops a walk of an object's members at the one looked for.
var errFound = errors.New("found")

// each calls f with the key ("" in an array) and the offset of each value
// of the array or object at offset at, in order, until f returns an error.
func (w *textWalk) each(at int, f func(key string, v int) error) error {
	closing := byte(']')
	if w.src[at] == '{' {
		closing = '}'
	}
	i := w.skipSpace(at + 1)
	if i < len(w.src) && w.src[i] == closing {
		return nil
	}
	for {
		var key string
		if closing == '}' {
			k, end, err := w.key(i)
			if err != nil {
				return err
			}
			key = k
			i = w.skipSpace(end)
			if i >= len(w.src) || w.src[i] != ':' {
				return w.malformed(i, "a colon")
			}
			i = w.skipSpace(i + 1)
		}
		if i >= len(w.src) {
			return w.malformed(i, "a value")
		}
		if err := f(key, i); err != nil {
			return err
		}
		end, err := w.skip(i)
		if err != nil {
			return err
		}
		i = w.skipSpace(end)
		if i < len(w.src) && w.src[i] == closing {
			return nil
		}
		if i >= len(w.src) || w.src[i] != ',' {
			return w.malformed(i, "a comma")
		}
		i = w.skipSpace(i + 1)
	}
}

// key decodes the object key at offset at, returning it and its end.
func (w *textWalk) key(at int) (string, int, error) {
	if at >= len(w.src) || w.src[at] != '"' {
		return "", at, w.malformed(at, "a key")
	}
	end, err := w.skip(at)
	if err != nil {
		return "", at, err
	}
	raw := w.src[at+1 : end-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), end, nil
	}
	return w.stringAt(at), end, nil
}

// malformed is the error of a walk that found no want at offset at.
func (w *textWalk) malformed(at int, want string) error {
	return fmt.Errorf("%w: want %s at byte %d", ErrSearchTextJSON, want, at)
}

// skipSpace is the offset of the first byte from at that is not JSON
// white space.
func (w *textWalk) skipSpace(at int) int {
	for at < len(w.src) {
		switch w.src[at] {
		case ' ', '\t', '\n', '\r':
			at++
		default:
			return at
		}
	}
	return at
}

// skip is the end of the value at offset at.
func (w *textWalk) skip(at int) (int, error) {
	if at >= len(w.src) {
		return at, w.malformed(at, "a value")
	}
	switch c := w.src[at]; c {
	case '"':
		return w.str(at, false)
	case '{', '[':
		return w.closeOf(at)
	default:
		i := at
		for i < len(w.src) && (w.src[i] == '-' || w.src[i] == '+' || w.src[i] == '.' || w.src[i] >= '0' && w.src[i] <= '9' || w.src[i] >= 'a' && w.src[i] <= 'z' || w.src[i] >= 'A' && w.src[i] <= 'Z') {
			i++
		}
		if i == at {
			return at, w.malformed(at, "a value")
		}
		return i, nil
	}
}

// closeOf is the end of the array or object at offset at (just past its
// closing bracket), found by skipping its values.
func (w *textWalk) closeOf(at int) (int, error) {
	depth := 0
	for i := at; i < len(w.src); i++ {
		switch w.src[i] {
		case '"':
			end, err := w.str(i, false)
			if err != nil {
				return at, err
			}
			i = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return at, w.malformed(len(w.src), "a closing bracket")
}

// str reads the string at offset at and returns its end (past the closing
// quote); with take, it appends its decoded bytes to the text, up to the
// cap (then errFull). Escapes decode as SQLite decodes them: a \u of a
// lone surrogate as its three bytes; other bytes are copied as they are.
func (w *textWalk) str(at int, take bool) (int, error) {
	i, quote := at+1, -1
	for {
		j := w.stringStop(i, &quote)
		if take {
			if err := w.out.write(w.src[i:j]); err != nil {
				return j, err
			}
		}
		if j >= len(w.src) {
			return j, w.malformed(j, "the end of a string")
		}
		if w.src[j] == '"' {
			return j + 1, nil
		}
		r, n, err := w.escape(j)
		if err != nil {
			return j, err
		}
		if take {
			if err := w.out.write(r); err != nil {
				return j, err
			}
		}
		i = j + n
	}
}

// stringStop is the offset of the first quote or backslash from offset
// at, or the end of src, by two scans of bytes.IndexByte (many times
// faster than a loop over the bytes). quote is where a previous call
// found the next quote, kept so that a string of many escapes is not
// scanned to its end again for each.
func (w *textWalk) stringStop(at int, quote *int) int {
	if *quote < at {
		*quote = len(w.src)
		if q := bytes.IndexByte(w.src[at:], '"'); q >= 0 {
			*quote = at + q
		}
	}
	if backslash := bytes.IndexByte(w.src[at:*quote], '\\'); backslash >= 0 {
		return at + backslash
	}
	return *quote
}

// escape decodes the escape at offset at, returning its bytes and length.
func (w *textWalk) escape(at int) ([]byte, int, error) {
	if at+1 >= len(w.src) {
		return nil, 0, w.malformed(at, "an escape")
	}
	b := w.esc[:0]
	switch c := w.src[at+1]; c {
	case '"', '\\', '/':
		return append(b, c), 2, nil
	case 'b':
		return append(b, '\b'), 2, nil
	case 'f':
		return append(b, '\f'), 2, nil
	case 'n':
		return append(b, '\n'), 2, nil
	case 'r':
		return append(b, '\r'), 2, nil
	case 't':
		return append(b, '\t'), 2, nil
	case 'u':
		r, ok := w.hex4(at + 2)
		if !ok {
			return nil, 0, w.malformed(at, "four hex digits")
		}
		if r >= 0xd800 && r < 0xdc00 && at+11 < len(w.src) && w.src[at+6] == '\\' && w.src[at+7] == 'u' {
			if lo, ok := w.hex4(at + 8); ok && lo >= 0xdc00 && lo < 0xe000 {
				return utf8.AppendRune(b, 0x10000+(r-0xd800)<<10+(lo-0xdc00)), 12, nil
			}
		}
		return appendUTF8Raw(b, r), 6, nil
	}
	return nil, 0, w.malformed(at, "an escape")
}

// hex4 reads four hex digits at offset at.
func (w *textWalk) hex4(at int) (rune, bool) {
	if at+4 > len(w.src) {
		return 0, false
	}
	var r rune
	for _, c := range w.src[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// appendUTF8Raw appends the UTF-8 form of a code point below 0x10000,
// surrogates included (which utf8.AppendRune would replace), as SQLite
// writes a lone surrogate's escape.
func appendUTF8Raw(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, 0xc0|byte(r>>6), 0x80|byte(r&0x3f))
	}
	return append(b, 0xe0|byte(r>>12), 0x80|byte(r>>6&0x3f), 0x80|byte(r&0x3f))
}
