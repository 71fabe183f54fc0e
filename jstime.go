package sessiontree

import "time"

// jsTime is a timestamp taken apart as JavaScript's Date reads it.
type jsTime struct {
	s   string
	pos int
}

// parseJSTime parses s as V8's Date does for the ECMAScript date time
// string format: YYYY (or ±YYYYYY), then optionally -MM and -DD, then
// optionally a time, T (or t, or a space) HH:mm, optionally :ss and a
// fraction of any length (cut to the millisecond as V8 cuts it, see
// fraction), then optionally Z (or z) or an offset ±HH:mm or ±HHmm. A
// date alone is UTC, a date and time without zone local time. As in V8,
// a day past the month's end (up to 31) runs into the next month and
// 24:00 is the next day's start; any other field out of range, a time
// beyond a Date's range, or anything else, fails. A space before the
// time makes a year below 100 a two-digit one, or refused (legacyYear).
func parseJSTime(s string) (time.Time, bool) {
	p := jsTime{s: s}
	year, ok := p.year()
	month, day := 1, 1
	if ok && p.peek('-') {
		month, ok = p.field('-', 1, 12)
		if ok && p.peek('-') {
			day, ok = p.field('-', 1, 31)
		}
	}
	if !ok {
		return time.Time{}, false
	}
	if p.pos == len(s) {
		return dateValue(time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC))
	}
	if s[p.pos] == ' ' {
		if year, ok = legacyYear(year); !ok {
			return time.Time{}, false
		}
	}
	return p.clock(year, month, day)
}

// legacyYear is the year V8 reads in a date and time parted by a space,
// which is not the ECMAScript format: its legacy parser takes a year of
// 32 to 99 for a two-digit one, to 49 in 2000 and on, from 50 in the
// 1900s ("0049-01-01 00:00Z" is 2049, "0050-..." 1950), and one of 0
// to 31 for a month or day, the fields after it for others ("0010-01-01
// 00:00" is 1 October 2001): that is refused (false).
func legacyYear(year int) (int, bool) {
	switch {
	case 0 <= year && year < 32:
		return 0, false
	case 32 <= year && year < 50:
		return year + 2000, true
	case 50 <= year && year < 100:
		return year + 1900, true
	}
	return year, true
}

// clock parses the time and zone after the date.
func (p *jsTime) clock(year, month, day int) (time.Time, bool) {
	if c := p.s[p.pos]; c != 'T' && c != 't' && c != ' ' {
		return time.Time{}, false
	}
	p.pos++
	hour, ok := p.digits(2, 0, 24)
	min, ok2 := p.field(':', 0, 59)
	sec, ms, zero := 0, 0, true
	ok = ok && ok2
	if ok && p.peek(':') {
		sec, ok = p.field(':', 0, 59)
		if ok && p.peek('.') {
			ms, zero, ok = p.fraction()
		}
	}
	if !ok || hour == 24 && (min+sec != 0 || !zero) {
		return time.Time{}, false
	}
	loc, ok := p.zone()
	if !ok || p.pos != len(p.s) {
		return time.Time{}, false
	}
	return dateValue(time.Date(year, time.Month(month), day, hour, min, sec, ms*int(time.Millisecond), loc))
}

// maxDate is the farthest a JavaScript Date reaches from the epoch, in
// milliseconds either way (some 275,000 years).
const maxDate = 8.64e15

// dateValue returns t, and whether a Date can hold it: "+275760-09-13T00:00Z"
// is its last, a millisecond later is NaN.
func dateValue(t time.Time) (time.Time, bool) {
	ms := t.UnixMilli()
	return t, -maxDate <= ms && ms <= maxDate
}

// year reads four digits, or a sign and six; -000000 is not a year
// (ECMAScript forbids it: Date reads "-000000-01-01T00:00Z" as NaN).
func (p *jsTime) year() (int, bool) {
	if p.peek('+') || p.peek('-') {
		neg := p.s[p.pos] == '-'
		p.pos++
		y, ok := p.digits(6, 0, 999999)
		if neg {
			y = -y
		}
		return y, ok && !(neg && y == 0)
	}
	return p.digits(4, 0, 9999)
}

// zone reads Z, an offset or nothing (local time).
func (p *jsTime) zone() (*time.Location, bool) {
	if p.pos == len(p.s) {
		return time.Local, true
	}
	switch c := p.s[p.pos]; c {
	case 'Z', 'z':
		p.pos++
		return time.UTC, true
	case '+', '-':
		p.pos++
		h, ok := p.digits(2, 0, 23)
		p.pos += boolInt(p.peek(':'))
		m, ok2 := p.digits(2, 0, 59)
		off := (h*60 + m) * 60
		if c == '-' {
			off = -off
		}
		return time.FixedZone("", off), ok && ok2
	}
	return nil, false
}

// fraction reads a dot and at least one digit, and returns the
// milliseconds V8 makes of them (ReadMilliseconds in its dateparser):
// the first nine digits after any leading zeros as a number, divided by
// ten for each digit past the third of all of them, up to the ninth. So
// a fraction of up to nine digits is cut to the millisecond, but a longer
// one that starts with zeros is not: ".000010000000" is 10 ms, and
// ".000999999999" 999. It also reports whether every digit is 0: V8
// takes 24:00 with any other fraction for no time (24:00:00.0000001).
func (p *jsTime) fraction() (ms int, zero, ok bool) {
	p.pos++ // the dot
	start := p.pos
	for p.peek('0') {
		p.pos++
	}
	zero = p.pos == len(p.s) || !isDigit(p.s[p.pos])
	n := 0
	for i := 0; p.pos < len(p.s) && isDigit(p.s[p.pos]); i++ {
		if i < 9 {
			n = n*10 + int(p.s[p.pos]-'0')
		}
		p.pos++
	}
	digits := min(p.pos-start, 9)
	for ; digits < 3; digits++ {
		n *= 10
	}
	for ; digits > 3; digits-- {
		n /= 10
	}
	return n, zero, p.pos > start
}

// field reads sep and two digits in [lo, hi].
func (p *jsTime) field(sep byte, lo, hi int) (int, bool) {
	if !p.peek(sep) {
		return 0, false
	}
	p.pos++
	return p.digits(2, lo, hi)
}

// digits reads exactly n digits whose value is in [lo, hi].
func (p *jsTime) digits(n, lo, hi int) (int, bool) {
	if p.pos+n > len(p.s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(p.s[p.pos : p.pos+n]) {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	p.pos += n
	return v, lo <= v && v <= hi
}

func (p *jsTime) peek(c byte) bool { return p.pos < len(p.s) && p.s[p.pos] == c }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
