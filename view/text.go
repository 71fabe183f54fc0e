package view

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"golang.org/x/text/width"
)

// ellipsis ends text that was cut short.
const ellipsis = "…"

// RuneWidth returns the number of terminal columns r takes: 2 for East
// Asian wide and fullwidth characters (CJK, most emoji), 0 for control and
// combining characters, 1 otherwise.
func RuneWidth(r rune) int {
	switch {
	case r < 0x20 || r == 0x7f:
		return 0
	case r < 0x300:
		return 1
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200b || r == 0x200d || r == 0xfe0f:
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// StringWidth returns the number of terminal columns s takes, counted by
// grapheme cluster (see [clusterWidth]).
func StringWidth(s string) int {
	n, state := 0, -1
	for s != "" {
		var w int
		_, s, w, state = nextGrapheme(s, state)
		n += w
	}
	return n
}

// clusterWidth is the number of columns a grapheme cluster takes: the
// larger of its characters' widths added up ([RuneWidth]) and uniseg's
// width of the cluster (that of pi's visibleWidth: an emoji made so by
// U+FE0F, "⚠️", takes two columns, as terminals draw it, where its
// characters count one). The larger, because terminals differ on a
// sequence joined by U+200D: one that draws its parts side by side needs
// their sum, and a count too small would let a line cut to the terminal's
// width wrap.
func clusterWidth(c string, unisegWidth int) int {
	n := 0
	for _, r := range c {
		n += RuneWidth(r)
	}
	return max(n, unisegWidth)
}

// Truncate shortens s to at most cols terminal columns, ending it with "…"
// when it had to cut. It cuts between grapheme clusters (the characters a
// person reads: an emoji sequence, a flag, a letter with its accents),
// never inside one, and reads s only as far as cols columns: a summary of
// a megabyte of tool output costs no more than a short one. cols <= 0
// means no limit.
func Truncate(s string, cols int) string {
	if cols <= 0 {
		return s
	}
	limit := cols - StringWidth(ellipsis)
	w, end, state := 0, 0, -1
	for rest := s; rest != ""; {
		var cw int
		_, rest, cw, state = nextGrapheme(rest, state)
		if w += cw; w > cols {
			return s[:end] + ellipsis
		}
		if w <= limit {
			end = len(s) - len(rest)
		}
	}
	return s
}

// nextGrapheme splits the first grapheme cluster off s (state as
// uniseg's, -1 at the start) and returns its width ([clusterWidth]): a
// byte of ASCII followed by another, the common case, without asking
// uniseg.
func nextGrapheme(s string, state int) (cluster, rest string, width, newState int) {
	if s[0] < utf8.RuneSelf && s[0] != '\r' && (len(s) == 1 || s[1] < utf8.RuneSelf) {
		return s[:1], s[1:], RuneWidth(rune(s[0])), -1
	}
	cluster, rest, width, newState = uniseg.FirstGraphemeClusterInString(s, state)
	return cluster, rest, clusterWidth(cluster, width), newState
}

// TruncateLeft shortens s to at most cols columns by cutting its start, so
// the end of a long path stays visible: "…/project/src". It cuts between
// grapheme clusters, as [Truncate] does.
func TruncateLeft(s string, cols int) string {
	if cols <= 0 || StringWidth(s) <= cols {
		return s
	}
	limit := cols - StringWidth(ellipsis)
	cs := graphemes(s)
	w, start := 0, len(s)
	for i := len(cs) - 1; i >= 0; i-- {
		if w += cs[i].width; w > limit {
			break
		}
		start -= len(cs[i].text)
	}
	return ellipsis + s[start:]
}

// grapheme is a grapheme cluster and its width in columns.
type grapheme struct {
	text  string
	width int
}

// graphemes splits s into its grapheme clusters. (Truncate reads them one
// at a time instead: it stops at its width, whatever the length of s.)
func graphemes(s string) []grapheme {
	var out []grapheme
	state := -1
	for s != "" {
		var g grapheme
		g.text, s, g.width, state = nextGrapheme(s, state)
		out = append(out, g)
	}
	return out
}

// OneLine folds s onto one line: every run of white space (line breaks
// and tabs included) becomes a single space, every other control
// character becomes U+FFFD (see [TermText]), and the ends are trimmed.
func OneLine(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case acts(r):
			r = utf8.RuneError
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ErrorLine folds an error's message onto one line for a terminal: each
// of its lines (errors.Join puts every error on a line of its own) ends
// with "; " and the whole goes through [OneLine], so two errors never read
// as one sentence.
func ErrorLine(msg string) string {
	return OneLine(strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; "))
}

// TermText is s made safe to write to a terminal, its lines kept: every
// control character but line feed and tab becomes U+FFFD (�), so an
// escape sequence in session text (ESC ] 52 setting the clipboard, ESC [
// 2J clearing the screen, an OSC 8 link, a C1 CSI, a carriage return or
// backspace hiding what precedes it) shows as text and never acts on the
// terminal; so does a bidirectional override or isolate, which would
// reorder what follows it. A carriage return ending a line (CRLF) is dropped. It is the
// one rule for text meant for a terminal; [OneLine] folds with it too.
// JSON output, which escapes control characters itself, stays exact.
func TermText(s string) string {
	// An invalid byte (a raw 8-bit CSI) becomes U+FFFD too.
	if utf8.ValidString(s) && strings.IndexFunc(s, acts) < 0 {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if acts(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// acts reports whether r would act on a terminal instead of showing: a
// control character other than line feed and tab, or a bidirectional
// embedding, override or isolate (U+202A–U+202E, U+2066–U+2069), which a
// terminal that lays out right-to-left text applies to everything after it
// on the line, its other fields too, until a matching pop that session text
// need not hold ("Trojan Source"). The bidi marks (U+200E, U+200F, U+061C),
// which reorder nothing beyond their neighbours, stay.
func acts(r rune) bool {
	return r != '\n' && r != '\t' && unicode.IsControl(r) || isBidiControl(r)
}

// isBidiControl reports whether r opens or closes a bidirectional
// embedding, override or isolate.
func isBidiControl(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// PadRight pads s with spaces to cols columns.
func PadRight(s string, cols int) string {
	if n := cols - StringWidth(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// PadLeft pads s with spaces on the left to cols columns.
func PadLeft(s string, cols int) string {
	if n := cols - StringWidth(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}

// ShortID returns the first 8 characters of an id, the length pi gives
// entry ids, so longer ids line up with them. Ids come from session files:
// a character that acts on a terminal shows as U+FFFD, as [TermText]
// shows it, a line break or tab too, so the id stays one field of its line.
func ShortID(id string) string {
	if len(id) > 8 {
		id = id[:8]
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c >= 0x7f {
			return strings.Map(func(r rune) rune {
				if r == '\n' || r == '\t' || acts(r) {
					return utf8.RuneError
				}
				return r
			}, id)
		}
	}
	return id
}
