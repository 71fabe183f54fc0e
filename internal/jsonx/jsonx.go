package jsonx

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects, so hostile input cannot
// exhaust the stack. It is SQLite's limit (JSON_MAX_DEPTH): the engine's
// search index and queries read entries with SQLite's JSON functions, which
// refuse anything deeper ("malformed JSON"), so every backend refuses such
// an entry alike, as invalid, before it is stored.
const MaxDepth = 1000

// SyntaxError reports invalid JSON at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
	// End says the input ended before the value did: everything up to
	// there is valid, so the input is the start of a JSON text cut short
	// ([Unfinished]).
	End bool
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

func syntaxErr(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// endErr is the error of input that ends at off, before the value does.
func endErr(off int, msg string) error {
	return &SyntaxError{Offset: off, Msg: msg, End: true}
}

// Unfinished reports whether b is the start of a JSON value cut short: it
// is not valid, but only because it ends too soon (an object without its
// closing brace, a string without its closing quote, "tr" for true),
// with no error before its end. A write cut short by a crash leaves such
// a line. Blank input is not unfinished: it holds no start of anything.
func Unfinished(b []byte) bool {
	var se *SyntaxError
	return skipSpace(b, 0) < len(b) && errors.As(Valid(b), &se) && se.End
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// ObjectMembers walks the top-level object in b and calls fn for each member
// with its raw (still quoted) key and its raw value. It fails if b is not a
// single valid JSON object. Keys are compared by callers with [KeyEquals].
func ObjectMembers(b []byte, fn func(key, value []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) {
		return syntaxErr(i, "empty input")
	}
	if b[i] != '{' {
		return syntaxErr(i, "want an object, got %q", b[i])
	}
	end, err := scanObject(b, i, 1, fn)
	if err != nil {
		return err
	}
	if j := skipSpace(b, end); j != len(b) {
		return syntaxErr(j, "trailing data after the object")
	}
	return nil
}

// Valid reports whether b is exactly one valid JSON value.
func Valid(b []byte) error {
	i := skipSpace(b, 0)
	end, err := skipValue(b, i, 0)
	if err != nil {
		return err
	}
	if j := skipSpace(b, end); j != len(b) {
		return syntaxErr(j, "trailing data after the value")
	}
	return nil
}

func scanObject(b []byte, i, depth int, fn func(key, value []byte) error) (int, error) {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) {
			return 0, endErr(i, "unterminated object")
		}
		if b[i] != '"' {
			return 0, syntaxErr(i, "want a member name")
		}
		keyEnd, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i:keyEnd]
		i = skipSpace(b, keyEnd)
		if i >= len(b) {
			return 0, endErr(i, "unterminated object")
		}
		if b[i] != ':' {
			return 0, syntaxErr(i, "want ':' after member name")
		}
		i = skipSpace(b, i+1)
		valEnd, err := skipValue(b, i, depth)
		if err != nil {
			return 0, err
		}
		if fn != nil {
			if err := fn(key, b[i:valEnd]); err != nil {
				return 0, err
			}
		}
		i = skipSpace(b, valEnd)
		if i >= len(b) {
			return 0, endErr(i, "unterminated object")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, syntaxErr(i, "want ',' or '}' in object")
		}
	}
}

// ArrayElements walks the top-level array in b and calls fn with each
// element's raw value. It fails if b is not a single valid JSON array.
func ArrayElements(b []byte, fn func(value []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return syntaxErr(i, "want an array")
	}
	end, err := scanArrayFn(b, i, 1, fn)
	if err != nil {
		return err
	}
	if j := skipSpace(b, end); j != len(b) {
		return syntaxErr(j, "trailing data after the array")
	}
	return nil
}

func scanArray(b []byte, i, depth int) (int, error) { return scanArrayFn(b, i, depth, nil) }

func scanArrayFn(b []byte, i, depth int, fn func(value []byte) error) (int, error) {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		end, err := skipValue(b, i, depth)
		if err != nil {
			return 0, err
		}
		if fn != nil {
			if err := fn(b[i:end]); err != nil {
				return 0, err
			}
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, endErr(i, "unterminated array")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, syntaxErr(i, "want ',' or ']' in array")
		}
	}
}

func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, endErr(i, "unexpected end of input")
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return 0, syntaxErr(i, "nesting deeper than %d", MaxDepth)
		}
		if c == '{' {
			return scanObject(b, i, depth+1, nil)
		}
		return scanArray(b, i, depth+1)
	case c == '"':
		return skipString(b, i)
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	default:
		return skipLiteral(b, i)
	}
}

func skipLiteral(b []byte, i int) (int, error) {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
			return i + len(lit), nil
		}
		if len(b)-i < len(lit) && string(b[i:]) == lit[:len(b)-i] {
			return 0, endErr(len(b), "unterminated "+lit)
		}
	}
	return 0, syntaxErr(i, "invalid character %q", b[i])
}

func skipString(b []byte, i int) (int, error) {
	start := i
	i++
	for {
		// Find the next byte that ends the string or needs a look: a
		// quote, a backslash or a control character. Strings are mostly
		// plain text, so this runs over eight bytes at a time.
		i += indexStringSpecial(b[i:])
		if i >= len(b) {
			return 0, endErr(start, "unterminated string")
		}
		switch b[i] {
		case '"':
			return i + 1, nil
		case '\\':
			n, err := skipEscape(b, i)
			if err != nil {
				return 0, err
			}
			i = n
		default:
			return 0, syntaxErr(i, "control character in string")
		}
	}
}

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// indexStringSpecial returns the index of the first byte of b that is a
// quote, a backslash or a control character, or len(b) if none is.
func indexStringSpecial(b []byte) int {
	i := 0
	for ; len(b)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// Bytes below 0x20, equal to '"', equal to '\\': the classic
		// "has a zero byte" tests. The lowest flagged byte is exact
		// (borrows only run towards higher bytes), which is all we use.
		ctl := (x - swarOnes*0x20) &^ x
		q := x ^ (swarOnes * '"')
		q = (q - swarOnes) &^ q
		bs := x ^ (swarOnes * '\\')
		bs = (bs - swarOnes) &^ bs
		if t := (ctl | q | bs) & swarHigh; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

func skipEscape(b []byte, i int) (int, error) {
	if i+1 >= len(b) {
		return 0, endErr(i, "unterminated escape")
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, nil
	case 'u':
		for _, h := range b[i+2 : min(i+6, len(b))] {
			if !isHex(h) {
				return 0, syntaxErr(i, "bad \\u escape")
			}
		}
		if i+6 > len(b) {
			return 0, endErr(i, "short \\u escape")
		}
		return i + 6, nil
	}
	return 0, syntaxErr(i, "bad escape \\%c", b[i+1])
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func skipNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	case i >= len(b):
		return 0, endErr(start, "unterminated number")
	default:
		return 0, syntaxErr(start, "bad number")
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == len(b) && j == i+1 {
			return 0, endErr(start, "unterminated number")
		}
		if j == i+1 {
			return 0, syntaxErr(start, "bad number")
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == len(b) && j == i {
			return 0, endErr(start, "unterminated number")
		}
		if j == i {
			return 0, syntaxErr(start, "bad number")
		}
		i = j
	}
	return i, nil
}

// KeyEquals reports whether the raw quoted key equals name. Keys with escapes
// are decoded first, so "\u0069d" matches "id" as JSON says it must.
func KeyEquals(rawKey []byte, name string) bool {
	if len(rawKey) == len(name)+2 && string(rawKey[1:len(rawKey)-1]) == name {
		return true
	}
	if !containsByte(rawKey, '\\') {
		return false
	}
	s, err := Unquote(rawKey)
	return err == nil && s == name
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// ErrNotString is returned by [Unquote] for a value that is not a JSON string.
var ErrNotString = errors.New("not a JSON string")

// Unquote decodes a raw JSON string value. Strings without escapes are
// converted directly; others go through encoding/json.
func Unquote(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", ErrNotString
	}
	inner := raw[1 : len(raw)-1]
	if !containsByte(inner, '\\') && utf8.Valid(inner) {
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// IsNull reports whether a raw value is the literal null.
func IsNull(raw []byte) bool { return string(raw) == "null" }

// Falsy reports whether a raw value (surrounding space trimmed) is false
// in JavaScript: null, false, a number equal to zero, "". pi tests
// values so (if (entry) …, entry.systemMessage ? …).
func Falsy(raw []byte) bool {
	switch {
	case len(raw) == 0, IsNull(raw), string(raw) == "false", string(raw) == `""`:
		return true
	case raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		return err == nil && f == 0
	}
	return false
}

// Field returns the raw value of the top-level member name of object b.
// When the member appears more than once the last one wins, as in
// encoding/json and JavaScript.
//
// Field trusts b to be valid JSON (an entry's Raw is checked when it is
// decoded or built) and does not check it again: it jumps from quote to
// quote, so a large payload costs a memchr, not a grammar walk. On invalid
// input the result is unspecified, but Field always returns.
func Field(b []byte, name string) (json.RawMessage, bool) {
	var found []byte
	Members(b, func(key, value []byte) {
		if KeyEquals(key, name) {
			found = value
		}
	})
	return found, found != nil
}

// Members calls fn with the raw (quoted) key and the raw value of each
// top-level member of object b, in order. Like [Field], which is it with
// one name, it trusts b to be valid JSON and jumps over strings; on
// invalid input it stops somewhere, having called fn for the members
// before. A caller that wants several fields reads them in one walk, and
// finds what a [Field] call for each would.
func Members(b []byte, fn func(key, value []byte)) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return
		}
		keyEnd := skipStringTrusted(b, i)
		key := b[i:keyEnd]
		i = skipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = skipSpace(b, i+1)
		end := skipTrusted(b, i)
		if end <= i {
			return
		}
		fn(key, b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

// Elements calls fn with the raw value of each element of array b, in
// order, trusting b to be valid JSON as [Members] does: it is
// [ArrayElements] for JSON checked already, at the cost of a jump over
// each string.
func Elements(b []byte, fn func(value []byte)) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return
	}
	for i = skipSpace(b, i+1); i < len(b) && b[i] != ']'; {
		end := skipTrusted(b, i)
		if end <= i {
			return
		}
		fn(b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipSpace(b, i+1)
	}
}

// skipTrusted returns the end of the value starting at b[i], trusting the
// grammar; it only tracks strings and nesting.
func skipTrusted(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipStringTrusted(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipStringTrusted(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
}

// skipStringTrusted returns the end of the string starting at b[i]: the
// first quote after it not escaped by an odd run of backslashes.
func skipStringTrusted(b []byte, i int) int {
	start := i + 1
	for i = start; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		n := 0
		for p := q - 1; p >= start && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// WriteCompactTrusted writes b, JSON known to be valid (an entry's
// stored JSON or a part of one, a value encoding/json made), to w without
// the whitespace between its tokens: what [json.Compact] makes of it
// without escaping HTML, in one pass that jumps over strings (a base64
// image is one) instead of checking every byte, and without validating.
// It writes b's runs between whitespace as they are, so a compact b is
// one write and nothing is copied.
func WriteCompactTrusted(w io.Writer, b []byte) error {
	start := 0 // the run being written
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] != '"' && !isSpace(b[j]) {
			j++
		}
		switch {
		case j == len(b):
			i = j
		case b[j] == '"':
			i = skipStringTrusted(b, j)
		default: // whitespace: the run ends
			if _, err := w.Write(b[start:j]); err != nil {
				return err
			}
			i, start = j+1, j+1
		}
	}
	_, err := w.Write(b[start:])
	return err
}

// OneLine makes JSON fit on one line, as a JSONL line must. Line breaks
// can only be space between tokens in valid JSON (inside strings they are
// escaped), so each becomes a space; invalid JSON is left as it is, for
// validation to refuse.
func OneLine(raw []byte) []byte {
	if bytes.IndexByte(raw, '\n') < 0 || Valid(raw) != nil {
		return raw
	}
	return bytes.ReplaceAll(raw, []byte{'\n'}, []byte{' '})
}
