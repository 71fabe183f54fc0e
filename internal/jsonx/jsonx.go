// Package jsonx is a small, strict JSON scanner used to read the few
// top-level fields of a session entry without decoding its payload.
//
// It validates the whole input (RFC 8259 grammar, no trailing data) while
// it walks it, so a caller that only needs "type", "id" and "parentId" of a
// one-megabyte message still learns whether the line is valid JSON, at the
// cost of one pass over its bytes. Values are returned as sub-slices of the
// input; nothing is copied. Invalid UTF-8 inside strings is accepted and
// kept byte for byte, as encoding/json accepts it.
package jsonx

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects, so hostile input cannot
// exhaust the stack. encoding/json uses the same limit.
const MaxDepth = 10000

// SyntaxError reports invalid JSON at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

func syntaxErr(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
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
		if i >= len(b) || b[i] != '"' {
			return 0, syntaxErr(i, "want a member name")
		}
		keyEnd, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i:keyEnd]
		i = skipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
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
			return 0, syntaxErr(i, "unterminated object")
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

func scanArray(b []byte, i, depth int) (int, error) {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		end, err := skipValue(b, i, depth)
		if err != nil {
			return 0, err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, syntaxErr(i, "unterminated array")
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
		return 0, syntaxErr(i, "unexpected end of input")
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
			return 0, syntaxErr(start, "unterminated string")
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
		return 0, syntaxErr(i, "unterminated escape")
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, nil
	case 'u':
		if i+6 > len(b) {
			return 0, syntaxErr(i, "short \\u escape")
		}
		for _, h := range b[i+2 : i+6] {
			if !isHex(h) {
				return 0, syntaxErr(i, "bad \\u escape")
			}
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
	default:
		return 0, syntaxErr(start, "bad number")
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
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

// Field returns the raw value of the top-level member name of object b.
// When the member appears more than once the last one wins, as in
// encoding/json and JavaScript.
func Field(b []byte, name string) (json.RawMessage, bool) {
	var found []byte
	err := ObjectMembers(b, func(k, v []byte) error {
		if KeyEquals(k, name) {
			found = v
		}
		return nil
	})
	if err != nil || found == nil {
		return nil, false
	}
	return found, true
}
