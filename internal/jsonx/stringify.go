package jsonx

import "unicode/utf8"

// AppendString appends s to buf as a JSON string the way JavaScript's
// JSON.stringify writes it (as pi does): only quotes, backslashes and
// control characters are escaped; <, >, & and U+2028/U+2029 stay as
// they are. Invalid UTF-8 becomes U+FFFD, as in encoding/json.
func AppendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			buf = append(buf, s[start:i]...)
			buf = append(buf, "\ufffd"...)
			i++
			start = i
			continue
		}
		buf = append(buf, s[start:i]...)
		buf = appendEscape(buf, c)
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

func appendEscape(buf []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(buf, '\\', c)
	case '\n':
		return append(buf, '\\', 'n')
	case '\r':
		return append(buf, '\\', 'r')
	case '\t':
		return append(buf, '\\', 't')
	case '\b':
		return append(buf, '\\', 'b')
	case '\f':
		return append(buf, '\\', 'f')
	}
	const hex = "0123456789abcdef"
	return append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}
