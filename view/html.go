package view

import (
	"bufio"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"iter"
	"strconv"
	"strings"
	"sync"
)

// shareFiles are the HTML page's template and style sheet.
//
//go:embed share/page.html share/page.css
var shareFiles embed.FS

// pageTemplate is the HTML page; html/template escapes every value put
// into it for where it goes (text, attribute, URL, CSS). It is parsed at
// its first use, not at start-up, which every command would pay (a fifth
// of a millisecond).
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page.html").ParseFS(shareFiles, "share/page.html"))
})

// pageCSS is the page's style sheet, ours and trusted.
var pageCSS = sync.OnceValue(func() template.CSS {
	b, err := shareFiles.ReadFile("share/page.css")
	if err != nil {
		panic(err) // embedded at build time: cannot be missing
	}
	return template.CSS(b) // our own file, not session text
})

// WriteHTML writes a session as one self-contained HTML page: no script,
// no external resource, images inline as data URIs, so it opens anywhere
// without a network. It holds the facts [WriteMarkdown] starts with, the
// whole tree as nested lists (a run of entries between forks per item,
// with its labels) and every entry, each once. Every branch is numbered
// and linked from where it ends in the tree; following a link shows that
// branch alone, root to tip (CSS :target, so it works without
// JavaScript), and the page opens on the active branch. Every piece of
// session text goes through html/template, so it shows as text and never
// acts as markup, script or link. Images of a type other than PNG, JPEG,
// GIF or WebP are left out with a note.
func WriteHTML(w io.Writer, s Share) error {
	t := newShareTree(s.Data)
	p := htmlPage{Title: s.title(), CSS: pageCSS(), Facts: s.facts(len(t.branches)), Active: t.active + 1}
	switch {
	case len(s.Data.Log) == 0:
		p.Empty = "The session has no entries."
	case t.active < 0:
		p.Empty = "The leaf is before the first entry: the active branch is empty. Pick a branch in the tree."
	}
	for k, b := range t.branches {
		where, size := t.describe(k)
		p.Branches = append(p.Branches, htmlBranch{N: k + 1, Active: b.active, Where: where, Size: size})
	}
	marks := s.Data.EditMarks()
	p.Entries = func(yield func(htmlEntry) bool) {
		for _, n := range t.order {
			if !yield(htmlEntryOf(turnOf(n.Entry), t.member[n.Entry.ID], s.Data, marks)) {
				return
			}
		}
	}
	p.Chains = htmlChains(t.chains(s.Data.Leaf), t, s.Data.Labels)
	bw := bufio.NewWriter(w)
	if err := pageTemplate().Execute(bw, p); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

// htmlPage is what the page template shows.
type htmlPage struct {
	Title    string
	CSS      template.CSS
	Facts    [][2]string
	Active   int // the active branch's number, 0 when none
	Empty    string
	Branches []htmlBranch
	Chains   []htmlChain
	// Entries are made one at a time as the template writes them, so
	// that only one entry's images are held decoded at once, not every
	// image of the session.
	Entries iter.Seq[htmlEntry]
}

// htmlBranch is a branch's heading, shown above its entries.
type htmlBranch struct {
	N      int
	Active bool
	Where  string
	Size   string
}

// htmlChain is an item of the page's tree: a run of entries between
// forks, and the branch ending at its last entry (0 when none).
type htmlChain struct {
	Text     string
	Count    int
	Labels   []string
	Branch   int
	Active   bool
	Children []htmlChain
}

// htmlChains makes the page's tree items; each names a run by its first
// user message (else its first entry).
func htmlChains(cs []chain, t *shareTree, labels map[string]string) []htmlChain {
	out := make([]htmlChain, 0, len(cs))
	for _, c := range cs {
		first := c.Nodes[0]
		for _, n := range c.Nodes {
			if isUserMessage(n.Entry) {
				first = n
				break
			}
		}
		hc := htmlChain{Text: ShortID(first.Entry.ID) + " " + Truncate(EntrySummary(first.Entry), 60), Count: len(c.Nodes), Branch: c.Branch + 1}
		if c.Branch >= 0 {
			hc.Active = t.branches[c.Branch].active
		}
		for _, n := range c.Nodes {
			if l := labels[n.Entry.ID]; l != "" {
				hc.Labels = append(hc.Labels, OneLine(l))
			}
		}
		hc.Children = htmlChains(c.Children, t, labels)
		out = append(out, hc)
	}
	return out
}

// htmlEntry is one entry of the page.
type htmlEntry struct {
	ID, Class, Title, Details string
	Time, Short, Mark, Label  string
	Folded                    string
	Leaf, Note                bool
	Parts                     []htmlPart
}

// htmlPart is one part of an entry: Kind is "text", "thinking", "code",
// "image" (URL set, Text its alt text) or "note".
type htmlPart struct {
	Kind, Title, Text string
	URL               template.URL
}

func htmlEntryOf(t turn, branches []int, d SessionData, marks map[string]string) htmlEntry {
	classes := []string{"e", t.Kind}
	for _, k := range branches {
		classes = append(classes, "b"+strconv.Itoa(k+1))
	}
	e := htmlEntry{
		ID: t.Entry.ID, Class: strings.Join(classes, " "), Title: t.Title, Details: strings.Join(t.Details, " · "),
		Time: entryTime(t.Entry), Short: ShortID(t.Entry.ID), Label: OneLine(d.Labels[t.Entry.ID]), Mark: markNote(marks[t.Entry.ID]),
		Leaf: d.Leaf != "" && t.Entry.ID == d.Leaf, Note: t.Kind == "note", Folded: t.Folded,
	}
	for _, p := range t.Parts {
		e.Parts = append(e.Parts, htmlPartOf(p))
	}
	return e
}

// inlineImageTypes are the image types shown inline: those every browser
// draws and none runs script in (unlike SVG).
var inlineImageTypes = map[string]string{
	"image/png": "image/png", "image/jpeg": "image/jpeg", "image/jpg": "image/jpeg",
	"image/gif": "image/gif", "image/webp": "image/webp",
}

func htmlPartOf(p part) htmlPart {
	switch p.Kind {
	case partText:
		return htmlPart{Kind: "text", Text: p.Text}
	case partThinking:
		return htmlPart{Kind: "thinking", Text: p.Text}
	case partImage:
		mime, ok := inlineImageTypes[strings.ToLower(p.Mime)]
		if !ok {
			return htmlPart{Kind: "note", Text: "(" + p.Mime + " image: not shown, only PNG, JPEG, GIF and WebP are)"}
		}
		data, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil {
			return htmlPart{Kind: "note", Text: "(" + p.Mime + " image: its data is not valid base64)"}
		}
		// The URL is built from our own type name and re-encoded bytes,
		// never from session text, so it can only be an image.
		url := template.URL("data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data))
		return htmlPart{Kind: "image", URL: url, Text: mime + " image"}
	}
	return htmlPart{Kind: "code", Title: p.Title, Text: p.Text}
}
