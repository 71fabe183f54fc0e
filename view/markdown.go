package view

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/sessiontree/sessiontree/internal/fsx"
)

// MarkdownOptions tune [WriteMarkdown]. The zero value writes the active
// branch and leaves images out.
type MarkdownOptions struct {
	// Tree adds a list of every branch after the transcript: where each
	// forks off, its labels, and an outline of its own entries.
	Tree bool
	// Image, when set, keeps an image somewhere and returns the link the
	// page shows it with (see [ImageFiles]); nil leaves images out, each
	// with a note saying so.
	Image func(Image) (link string, err error)
}

// Image is an image block of a message, decoded.
type Image struct {
	// MimeType is the type the message gives, such as "image/png".
	MimeType string
	// Data is the image's bytes.
	Data []byte
}

// WriteMarkdown writes a session as Markdown fit for a pull request or a
// repository: a title (the session name, else its id), a list of facts
// (id, working directory, creation time, models used, token and cost
// totals over every branch), then the active branch, root first, as a
// transcript. User and assistant text is Markdown as written, except
// that HTML tags outside code are escaped and a code fence left open is
// closed, so it cannot swallow the rest of the page; thinking is
// folded in <details>; tool calls, tool results, commands and system
// prompts are fenced code blocks, each fence longer than any backtick run
// inside; compactions and branch summaries stand out under a rule, their
// summary quoted; other entries (model changes, labels, usage records) are
// one-line notes. Entries a context edit hides from or changes in the
// model's context at the leaf say so. With opts.Tree, a list of every
// branch follows.
func WriteMarkdown(w io.Writer, s Share, opts MarkdownOptions) error {
	t := newShareTree(s.Data)
	mw := &mdWriter{w: bufio.NewWriter(w), opts: opts, labels: s.Data.Labels, leaf: s.Data.Leaf, marks: s.Data.EditMarks()}
	mw.block("# " + mdInline(s.title()))
	var facts []string
	for _, f := range s.facts(len(t.branches)) {
		facts = append(facts, "- **"+f[0]+":** "+mdInline(f[1]))
	}
	mw.block(strings.Join(facts, "\n"))
	path := t.activePath()
	switch {
	case len(path) == 0 && len(s.Data.Log) == 0:
		mw.block("## Transcript\n\n_The session has no entries._")
	case len(path) == 0:
		mw.block("## Transcript\n\n_The leaf is before the first entry: the active branch is empty._")
	default:
		mw.block(fmt.Sprintf("## Transcript\n\n_The active branch, %s, from the root to the leaf %s._",
			entries(len(path)), mdInline(ShortID(s.Data.Leaf))))
	}
	for _, e := range path {
		if err := mw.turn(turnOf(e)); err != nil {
			return err
		}
	}
	if opts.Tree {
		mw.branches(t)
	}
	mw.endList()
	if err := mw.w.Flush(); err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}

// mdWriter writes Markdown blocks separated by blank lines; one-line
// notes in a row form one list.
type mdWriter struct {
	w      *bufio.Writer
	opts   MarkdownOptions
	labels map[string]string
	marks  map[string]string
	leaf   string
	inList bool
}

func (mw *mdWriter) block(s string) {
	mw.endList()
	mw.w.WriteString(s)
	mw.w.WriteString("\n\n")
}

func (mw *mdWriter) endList() {
	if mw.inList {
		mw.w.WriteString("\n")
		mw.inList = false
	}
}

// meta is the line under a turn's heading: time, id, leaf, edit mark,
// label.
func (mw *mdWriter) meta(t turn) string {
	parts := []string{entryTime(t.Entry), ShortID(t.Entry.ID)}
	if t.Entry.ID == mw.leaf {
		parts = append(parts, "leaf")
	}
	if m := markNote(mw.marks[t.Entry.ID]); m != "" {
		parts = append(parts, m)
	}
	if l := mw.labels[t.Entry.ID]; l != "" {
		parts = append(parts, "label: "+l)
	}
	for i := range parts {
		parts[i] = mdInline(parts[i])
	}
	return strings.Join(parts, " · ")
}

func (mw *mdWriter) turn(t turn) error {
	if t.Kind == "note" {
		mw.inList = true
		fmt.Fprintf(mw.w, "- _%s_ · %s\n", mdInline(t.Title), mw.meta(t))
		return nil
	}
	quoted := t.Kind == "compaction" || t.Kind == "branchSummary"
	if quoted {
		mw.block("---")
	}
	head := "### " + mdInline(strings.Join(append([]string{t.Title}, t.Details...), " · "))
	mw.block(head + "\n\n_" + mw.meta(t) + "_")
	if t.Folded != "" && len(t.Parts) > 0 {
		mw.block("<details>\n<summary>" + html.EscapeString(t.Folded) + "</summary>")
	}
	for _, p := range t.Parts {
		s, err := mw.part(p)
		if err != nil {
			return err
		}
		if quoted && p.Kind == partText {
			s = blockQuote(s)
		}
		mw.block(s)
	}
	if t.Folded != "" && len(t.Parts) > 0 {
		mw.block("</details>")
	}
	return nil
}

// part is one part of a turn as a Markdown block.
func (mw *mdWriter) part(p part) (string, error) {
	switch p.Kind {
	case partText:
		return safeProse(p.Text), nil
	case partThinking:
		return "<details>\n<summary>Thinking</summary>\n\n" + fenced(p.Text, "text") + "\n\n</details>", nil
	case partImage:
		return mw.image(p)
	}
	code := fenced(p.Text, p.Lang)
	if p.Title != "" {
		code = "**" + mdInline(p.Title) + "**\n\n" + code
	}
	return code, nil
}

// image is an image part: a link to where opts.Image kept it, or a note.
func (mw *mdWriter) image(p part) (string, error) {
	data, err := base64.StdEncoding.DecodeString(p.Data)
	if err != nil {
		return "_(" + mdInline(p.Mime) + " image: its data is not valid base64)_", nil
	}
	if mw.opts.Image == nil {
		return fmt.Sprintf("_(%s image, %s bytes, not included)_", mdInline(p.Mime), Count(int64(len(data)))), nil
	}
	link, err := mw.opts.Image(Image{MimeType: p.Mime, Data: data})
	if err != nil {
		return "", err
	}
	return "![" + mdInline(p.Mime+" image") + "](<" + link + ">)", nil
}

// branches writes the list of every branch: where it ends and forks off,
// then an outline of its own entries.
func (mw *mdWriter) branches(t *shareTree) {
	var b strings.Builder
	b.WriteString("## Branches\n\n")
	if len(t.branches) == 0 {
		b.WriteString("_No branches: the session has no entries._")
	}
	for k, br := range t.branches {
		if k > 0 {
			b.WriteString("\n")
		}
		head := fmt.Sprintf("%d. **Branch %d**", k+1, k+1)
		if br.active {
			head += " (active)"
		}
		where, size := t.describe(k)
		fmt.Fprintf(&b, "%s · %s · ends at %s · %s\n", head, mdInline(where), mdInline(ShortID(br.tip().Entry.ID)), size)
		outline, skipped := t.milestones(br, mw.labels)
		for _, n := range outline {
			if n == nil {
				fmt.Fprintf(&b, "   - _… %s_\n", plural(skipped[0], "more user message"))
				skipped = skipped[1:]
				continue
			}
			b.WriteString("   - " + mdInline(entryLine(n.Entry, mw.labels, nil, mw.leaf, defaultTextWidth)) + "\n")
		}
	}
	mw.block(strings.TrimRight(b.String(), "\n"))
}

// mdSpecial are the characters that can start Markdown inline syntax or
// HTML, or end a heading (#); mdInline escapes them. Block syntax (- + =
// at a line's start) needs no escape: inline text never starts a line.
const mdSpecial = "\\`*_[]<>|~&#"

// mdInline is s folded onto one line, with every character that could
// make Markdown or HTML of it escaped, so that it shows as written. An
// underscore inside a word (model_change) is left alone: it cannot
// emphasize there.
func mdInline(s string) string {
	s = OneLine(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(mdSpecial, c) >= 0 && !(c == '_' && i > 0 && i < len(s)-1 && isWordByte(s[i-1]) && isWordByte(s[i+1])) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// isWordByte reports whether c is an ASCII letter or digit.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// fenced is text in a fenced code block whose fence is longer than any
// run of backticks in it, so nothing inside can end it.
func fenced(text, lang string) string {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	return fence + lang + "\n" + text + "\n" + fence
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// fenceLine matches a line that opens or closes a code fence. It and the
// other patterns of this file are compiled at their first use, as
// pageTemplate is parsed: compiled at start-up, they cost every command
// (1% of `sessiontree --help`'s CPU time).
var fenceLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$") })

// safeProse returns Markdown text, as the user or the model wrote it, made
// safe to embed: a code fence it leaves open is closed at its end, so it
// cannot turn the rest of the page into code, and outside code (fenced
// blocks and `code spans`) every "<" that would start an HTML tag, and
// every link to a javascript:, vbscript: or data: URL, is escaped, so no
// text of a session acts as HTML or script in a renderer that lets HTML
// through.
func safeProse(text string) string {
	lines := strings.Split(text, "\n")
	open := "" // the open fence, "" outside fenced code
	for i, line := range lines {
		if m := fenceLine().FindStringSubmatch(line); m != nil {
			// A fence line is written at the line's start: indented, it
			// could belong to a list item the text opened ("- a" then
			// "   ```"), whose end, not a closing fence, ends the code
			// there, so what follows as code here would be HTML to a
			// renderer. At the start, it can only open or close a fence
			// of the page itself.
			switch {
			case open == "":
				if m[1][0] != '`' || !strings.Contains(m[2], "`") {
					open = m[1]
					lines[i] = strings.TrimLeft(line, " ")
					continue
				}
			case m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(m[2]) == "":
				open = ""
				lines[i] = strings.TrimLeft(line, " ")
				continue
			}
		}
		if open == "" {
			next := ""
			if i+1 < len(lines) {
				next = lines[i+1]
			}
			lines[i] = escapeTags(line, next)
		}
	}
	text = strings.Join(lines, "\n")
	if open != "" {
		text += "\n" + open
	}
	return text
}

// escapeTags escapes each "<" of a line that starts a tag, a comment or a
// declaration, and each link to a javascript:, vbscript: or data: URL,
// outside code spans. A code span is taken to end on its
// line (one that goes on to the next line has its "<" escaped too, which
// shows a backslash but lets nothing through). A link's destination may
// start on the next line, next.
func escapeTags(line, next string) string {
	var b strings.Builder
	def := -1 // where a definition of a link to an unsafe scheme starts
	if m := linkDefinition().FindStringSubmatchIndex(line); m != nil && unsafeDestination(line[m[4]:], next) {
		def = m[3]
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		if i == def {
			b.WriteByte('\\') // [x]: javascript:... defines no link then
		}
		switch {
		case c == '`':
			n := 1
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			run := line[i : i+n]
			if end := closingRun(line[i+n:], n); end >= 0 {
				run = line[i : i+n+end+n] // the whole code span, as written
			}
			b.WriteString(run)
			i += len(run) - 1
			continue
		case c == '\\' && i+1 < len(line):
			b.WriteString(line[i : i+2]) // an escape stays one
			i++
			continue
		case c == '<' && i+1 < len(line) && isTagStart(line[i+1]),
			c == '(' && i > 0 && line[i-1] == ']' && unsafeDestination(line[i+1:], next):
			b.WriteByte('\\') // not a tag; not a link that runs script
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unsafeScheme matches the start of a link destination whose scheme can
// run script or hide a page in the link: javascript:, vbscript:, data:.
var unsafeScheme = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?i:javascript|vbscript|data):`)
})

// linkDefinition matches a link reference definition, at the line's
// start or inside block quotes and list items (a definition there
// defines the link for the whole page); its groups are the containers'
// markers before it and what follows the colon.
var linkDefinition = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^((?:[ \t]|>|[-+*][ \t]|\d{1,9}[.)][ \t])*)\[[^\]]*\]:(.*)$`)
})

// unsafeDestination reports whether a link destination starting at rest
// (the line after "(" or "]:"; the next line, next, when rest is blank,
// as CommonMark allows) has an unsafe scheme (see unsafeScheme) as a
// browser reads it (see destinationStart).
func unsafeDestination(rest, next string) bool {
	return unsafeScheme().MatchString(destinationStart(rest, next))
}

// schemeLen is how much of a destination's start decides whether its
// scheme is unsafe: the longest such scheme, "javascript:".
const schemeLen = len("javascript:")

// maxReference is the length of the longest character reference
// CommonMark decodes ("&CounterClockwiseContourIntegral;"; a numeric one
// has at most 7 digits).
const maxReference = len("&CounterClockwiseContourIntegral;")

// destinationStart is the start of a link destination at rest (at next
// when rest is blank) as a browser reads it: after the renderer decodes
// character references ("&#106;avascript:", "javascript&colon;") and the
// browser drops tabs and line breaks inside a URL and control characters
// and spaces before it. It holds at least schemeLen bytes when the
// destination has as many, and it reads only a window of rest, grown
// while what it holds is dropped: safeProse asks at every link of a line,
// and reading each time to the line's end made a line of n links cost n
// times the line. A window may cut a reference or a character in two,
// which spoils at most maxReference bytes at its end: a window is enough
// when it gives that many more than schemeLen.
func destinationStart(rest, next string) string {
	if strings.TrimLeftFunc(rest, unicode.IsSpace) == "" {
		rest = next
	}
	// What the browser drops before a URL, written as is: no reference
	// starts with it, so dropping it first decodes the rest the same.
	rest = strings.TrimLeft(rest, urlSpace)
	for window := 64; ; window *= 2 {
		w := rest[:min(window, len(rest))]
		d := strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, html.UnescapeString(w))
		d = strings.TrimLeft(d, urlSpace)
		if len(w) == len(rest) || len(d) >= schemeLen+maxReference {
			return d
		}
	}
}

// urlSpace are the characters a browser drops before a URL (C0 controls
// and spaces; tabs and line breaks anywhere), with the "<" of a
// destination written <like this>.
const urlSpace = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f <"

// closingRun is the index in s of the first run of exactly n backticks,
// -1 when there is none.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// isTagStart reports whether c after "<" makes an HTML tag, closing tag,
// comment, declaration or processing instruction.
func isTagStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}

// blockQuote makes a block a block quote.
func blockQuote(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}

// imageExt is the file extension of an image's MIME type.
func imageExt(mime string) string {
	switch strings.ToLower(mime) {
	case "image/png":
		return ".png"
	case "image/jpeg", "image/jpg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ".bin"
}

// ImageFiles returns a [MarkdownOptions.Image] that writes each image
// into dir (made when needed), named by a hash of its bytes so that an
// image met twice is written once, and links to it as linkDir/name (a
// relative URL: linkDir is the path from the page to dir, with slashes).
func ImageFiles(dir, linkDir string) func(Image) (string, error) {
	var mu sync.Mutex
	written := map[string]bool{}
	return func(img Image) (string, error) {
		sum := sha256.Sum256(img.Data)
		name := hex.EncodeToString(sum[:8]) + imageExt(img.MimeType)
		link := (&url.URL{Path: path.Join(linkDir, name)}).String()
		mu.Lock()
		defer mu.Unlock()
		if written[name] {
			return link, nil
		}
		err := fsx.WriteFile(filepath.Join(dir, name), "image file", 0o644, func(w io.Writer) error {
			_, err := w.Write(img.Data)
			return err
		})
		if err != nil {
			return "", fmt.Errorf("write image: %w", err)
		}
		written[name] = true
		return link, nil
	}
}
