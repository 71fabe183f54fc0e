package view_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/memory"
	"github.com/sessiontree/sessiontree/view"
)

// shareFixtures are the sessions of the Markdown and HTML golden files:
// the demo session (a move back with a branch summary, a compaction, a
// name), one pi 0.73.1 wrote (several roots, a three-way fork, four
// compactions, labels, images), and two pi 1.6.0 wrote (system prompts,
// context edits, usage records; hand-made oddities in edited-00).
var shareFixtures = []string{"demo", "session-003", "pi1-real-00", "pi1-edited-00"}

func loadShare(t testing.TB, st sessiontree.Storage) view.Share {
	t.Helper()
	s, err := view.LoadShare(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func markdown(t testing.TB, s view.Share, opts view.MarkdownOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := view.WriteMarkdown(&buf, s, opts); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func page(t testing.TB, s view.Share) string {
	t.Helper()
	var buf bytes.Buffer
	if err := view.WriteHTML(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestMarkdownGolden(t *testing.T) {
	t.Parallel()
	for _, name := range shareFixtures {
		t.Run(name, func(t *testing.T) {
			s := loadShare(t, load(t, fixtures[name]))
			golden(t, name+".md", []byte(markdown(t, s, view.MarkdownOptions{Tree: true})))
			// Without --tree the page is the same up to the branch list.
			plain := markdown(t, s, view.MarkdownOptions{})
			withTree := markdown(t, s, view.MarkdownOptions{Tree: true})
			if before, _, ok := strings.Cut(withTree, "## Branches\n"); !ok || before != plain {
				t.Errorf("WriteMarkdown without Tree is not the page with Tree up to its branch list")
			}
		})
	}
}

func TestHTMLGolden(t *testing.T) {
	t.Parallel()
	for _, name := range shareFixtures[:3] {
		t.Run(name, func(t *testing.T) {
			golden(t, name+".html", []byte(page(t, loadShare(t, load(t, fixtures[name])))))
		})
	}
}

// TestMarkdownImages writes a session's images as files beside the page
// and checks each link names a file holding the image's bytes.
func TestMarkdownImages(t *testing.T) {
	t.Parallel()
	s := loadShare(t, load(t, fixtures["session-003"]))
	dir := filepath.Join(t.TempDir(), "page_images")
	md := markdown(t, s, view.MarkdownOptions{Image: view.ImageFiles(dir, "page_images")})
	links := regexp.MustCompile(`!\[image/png image\]\(<(page_images/[0-9a-f]{16}\.png)>\)`).FindAllStringSubmatch(md, -1)
	if len(links) == 0 {
		t.Fatalf("no image links in the page:\n%s", md)
	}
	want, _ := base64.StdEncoding.DecodeString("iVBORw0KGgo=") // the fixture's image
	for _, l := range links {
		got, err := os.ReadFile(filepath.Join(filepath.Dir(dir), l[1]))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("image %s holds %q, %v; want %q", l[1], got, err, want)
		}
	}
	if strings.Contains(md, "not included") {
		t.Errorf("with Image set, an image was still left out")
	}
	// Without Image every image is left out with a note.
	plain := markdown(t, s, view.MarkdownOptions{})
	if n, m := strings.Count(plain, "_(image/png image, 8 bytes, not included)_"), len(links); n != m {
		t.Errorf("without Image: %d notes; want %d, one per image", n, m)
	}
}

// hostile is text that would act as markup, script or a link if it were
// not escaped, and that would end a folded block or a code fence early.
const hostile = "<script>alert(1)</script> [click](javascript:alert(1)) [a](<JavaScript:alert(4)>) `<b>code</b>` <a href=\"javascript:alert(2)\">x</a> </details> ``` ~~~ & &lt; # *"

// hostileSession is a session with hostile text in every place session
// text goes: name, cwd, label, user and assistant text, thinking, a tool
// call's name and arguments, a tool result, a custom message, summaries,
// a system prompt section, and odd image types.
func hostileSession(t testing.TB) sessiontree.Storage {
	t.Helper()
	ctx := context.Background()
	st, err := memory.New(sessiontree.SessionMeta{ID: "evil", Version: 3, CreatedAt: "2026-03-01T10:00:00.000Z", Cwd: "/tmp/" + hostile}, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s := sessiontree.NewSession(st, sessiontree.SessionOptions{})
	q := strconv.Quote(hostile)
	msgs := []string{
		`{"role":"system","content":` + q + `,"sections":{` + q + `:` + q + `}}`,
		`{"role":"user","content":[{"type":"text","text":` + q + `},{"type":"image","mimeType":"image/svg+xml","data":"PHN2Zy8+"},{"type":"image","mimeType":"image/png\" onerror=\"alert(3)","data":"iVBORw0KGgo="},{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}]}`,
		`{"role":"assistant","provider":` + q + `,"model":"m","content":[{"type":"thinking","thinking":` + q + `},{"type":"text","text":"open fence:\n` + "```go" + `\nfunc x() {"},{"type":"toolCall","name":` + q + `,"arguments":{"cmd":` + q + `}}]}`,
		`{"role":"toolResult","toolName":` + q + `,"content":[{"type":"text","text":` + q + `}]}`,
	}
	var first string
	for _, m := range msgs {
		e, err := s.AppendMessage(ctx, []byte(m))
		if err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = e.ID
		}
	}
	custom, err := s.AppendCustomMessage(ctx, sessiontree.CustomMessage{CustomType: hostile, Content: []byte(q), Display: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendCompaction(ctx, sessiontree.Compaction{Summary: hostile, FirstKeptEntryID: first, TokensBefore: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetLabel(ctx, first, hostile); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetName(ctx, hostile); err != nil {
		t.Fatal(err)
	}
	// Back to the custom message: the messages stay on the active branch,
	// under a branch summary; the compaction, label and name go to the
	// other branch.
	if _, err := s.MoveTo(ctx, custom.ID, &sessiontree.BranchSummary{Summary: hostile}); err != nil {
		t.Fatal(err)
	}
	return st
}

// attrs finds the href and src attributes of a page.
var attrs = regexp.MustCompile(`(?i)\b(href|src)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)`)

// safeAttr is what a page's links and images may be: a branch link, an
// inline raster image.
var safeAttr = regexp.MustCompile(`^"(#b[0-9]+|data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+)"$`)

// tags are the tags of a page: session text has its "<" escaped, so
// every tag is the page's own.
var tags = regexp.MustCompile(`<[A-Za-z][^<>]*>`)

// pageAttrs are the href and src attributes of a page's tags.
func pageAttrs(page string) [][]string {
	var out [][]string
	for _, tag := range tags.FindAllString(page, -1) {
		out = append(out, attrs.FindAllStringSubmatch(tag, -1)...)
	}
	return out
}

// pageTags are the tags the page template makes.
var pageTags = []string{"html", "head", "meta", "title", "style", "body", "i", "header", "h1", "h2", "h3", "dl", "dt", "dd",
	"nav", "ul", "li", "a", "span", "p", "main", "section", "div", "details", "summary", "pre", "figure", "figcaption", "img"}

func TestHTMLEscaping(t *testing.T) {
	t.Parallel()
	out := page(t, loadShare(t, hostileSession(t)))
	handler := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	for _, tag := range tags.FindAllString(out, -1) {
		if name := strings.Fields(strings.Trim(tag, "<>"))[0]; !slices.Contains(pageTags, name) {
			t.Errorf("the page holds a tag it does not make: %s", tag)
		}
		if handler.MatchString(tag) {
			t.Errorf("the page holds an event handler: %s", tag)
		}
	}
	if n, m := strings.Count(out, "<details"), strings.Count(out, "</details>"); n != m || n == 0 {
		t.Errorf("the page opens %d <details> and closes %d", n, m)
	}
	for _, a := range pageAttrs(out) {
		if !safeAttr.MatchString(a[2]) {
			t.Errorf("%s=%s: neither a branch link nor an inline image", a[1], a[2])
		}
	}
	if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the escaped text is missing from the page")
	}
	if !strings.Contains(out, "image/svg&#43;xml image: not shown") {
		t.Errorf("an SVG image is not left out with a note")
	}
	if n := strings.Count(out, `<img src="data:image/png;base64,iVBORw0KGgo=" alt="image/png image">`); n != 1 {
		t.Errorf("the page shows %d PNG images; want 1 (a type with a quote in it is not shown)", n)
	}
}

// outsideFences is Markdown with its fenced code blocks removed (the
// fences must close: a fence left open is an error).
func outsideFences(t testing.TB, md string) string {
	t.Helper()
	var out []string
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, "> ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, trimmed[:1]))]
		case fence != "" && strings.TrimSpace(trimmed) != "" && strings.Trim(trimmed, fence[:1]) == "" && len(strings.TrimSpace(trimmed)) >= len(fence):
			fence = ""
		case fence == "":
			out = append(out, line)
		}
	}
	if fence != "" {
		t.Errorf("a code fence %q is left open at the end of the page", fence)
	}
	return strings.Join(out, "\n")
}

func TestMarkdownEscaping(t *testing.T) {
	t.Parallel()
	md := markdown(t, loadShare(t, hostileSession(t)), view.MarkdownOptions{Tree: true})
	outside := outsideFences(t, md)
	// What is left outside code blocks is prose: the user's and the
	// model's words are Markdown as written, so their text may hold
	// markup; every heading, fact, note, label and name must not.
	// Outside code blocks, only the page's own folding tags are HTML:
	// every "<" of session text that would start a tag is escaped, in
	// headings, facts, notes, labels and names, and in prose too.
	ownTags := regexp.MustCompile(`^(</?details>|<summary>[^<]*</summary>)$`)
	rawTag := regexp.MustCompile(`(^|[^\\])<[A-Za-z/!?]`)
	scriptLink := regexp.MustCompile(`(^|[^\\])\]\((?i)\s*javascript:|^\[[^\]]*\]:\s*javascript:`)
	codeSpan := regexp.MustCompile("`[^`]+`")
	for _, line := range strings.Split(outside, "\n") {
		line = codeSpan.ReplaceAllString(line, "`code`") // code shows as written
		if !ownTags.MatchString(line) && rawTag.MatchString(line) {
			t.Errorf("unescaped HTML in %q", line)
		}
		if scriptLink.MatchString(line) {
			t.Errorf("a javascript: link in %q", line)
		}
	}
	if !strings.Contains(md, `# \<script\>alert(1)\</script\>`) {
		t.Errorf("the title is not the escaped name:\n%s", md)
	}
	if n, m := strings.Count(outside, "\n<details>\n"), strings.Count(outside, "\n</details>\n"); n != m || n < 2 {
		t.Errorf("outside code blocks the page opens %d <details> and closes %d:\n%s", n, m, outside)
	}
	// The open fence in the assistant's text was closed: the tool result
	// after it is still a heading.
	if !strings.Contains(outside, "### Tool result") {
		t.Errorf("the assistant's open code fence swallowed the rest of the page:\n%s", md)
	}
}

// TestHTMLNoExternalResources checks every page of the golden fixtures
// needs nothing from a network: no script, style sheet, frame or font
// fetched, every link inside the page, every image inline.
func TestHTMLNoExternalResources(t *testing.T) {
	t.Parallel()
	for _, name := range shareFixtures {
		out := page(t, loadShare(t, load(t, fixtures[name])))
		for _, bad := range []string{"<script", "<link", "<iframe", "<object", "<embed", "@import", "url(", `src="http`, `href="http`, "//"} {
			if bad == "//" {
				// No protocol-relative or absolute URL in any attribute.
				for _, a := range pageAttrs(out) {
					if strings.Contains(a[2], "//") {
						t.Errorf("%s: %s=%s", name, a[1], a[2])
					}
				}
				continue
			}
			if strings.Contains(out, bad) {
				t.Errorf("%s: the page holds %q", name, bad)
			}
		}
		for _, a := range pageAttrs(out) {
			if !safeAttr.MatchString(a[2]) {
				t.Errorf("%s: %s=%s is neither a branch link nor an inline image", name, a[1], a[2])
			}
		}
	}
}

var (
	branchLink = regexp.MustCompile(`<a class="b([0-9]+)" href="#b([0-9]+)">`)
	entryTag   = regexp.MustCompile(`<(?:section|div) class="([^"]*)" id="e-([^"]*)">`)
)

// TestHTMLEveryBranch checks, for every fixture, that each branch of the
// tree (each tip, and the leaf) has a link in the page and that following
// it shows exactly the path from the root to that tip, in order.
func TestHTMLEveryBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range names() {
		t.Run(name, func(t *testing.T) {
			st := load(t, fixtures[name])
			out := page(t, loadShare(t, st))
			// The page: per branch number, the entries it shows.
			shown := map[string][]string{}
			for _, m := range entryTag.FindAllStringSubmatch(out, -1) {
				for _, c := range strings.Fields(m[1]) {
					if strings.HasPrefix(c, "b") {
						shown[c[1:]] = append(shown[c[1:]], m[2])
					}
				}
			}
			byTip := map[string][]string{}
			links := branchLink.FindAllStringSubmatch(out, -1)
			for _, l := range links {
				if l[1] != l[2] || !strings.Contains(out, `<i class="i" id="b`+l[1]+`">`) || !strings.Contains(out, "#b"+l[1]+":target") {
					t.Errorf("branch %s: the link, its target or its style rule is missing", l[1])
				}
				path := shown[l[1]]
				if len(path) == 0 {
					t.Errorf("branch %s shows no entry", l[1])
					continue
				}
				byTip[path[len(path)-1]] = path
			}
			// The session: every tip and the leaf, with its path.
			log, err := st.Log(ctx, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			leaf, _ := st.Leaf(ctx)
			var tips []string
			var walk func(ns []*sessiontree.TreeNode)
			walk = func(ns []*sessiontree.TreeNode) {
				for _, n := range ns {
					if len(n.Children) == 0 || n.Entry.ID == leaf {
						tips = append(tips, n.Entry.ID)
					}
					walk(n.Children)
				}
			}
			walk(sessiontree.BuildTree(log, nil))
			if len(links) != len(tips) {
				t.Errorf("the page links %d branches; the session has %d", len(links), len(tips))
			}
			for _, tip := range tips {
				full, err := st.FullPath(ctx, tip)
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, e := range full {
					want = append(want, e.ID)
				}
				if diff := cmp.Diff(want, byTip[tip]); diff != "" {
					t.Errorf("branch ending at %s (-want +got):\n%s", tip, diff)
				}
			}
			// The page opens on the active branch.
			active := regexp.MustCompile(`main \.e:not\(\.b([0-9]+)\)\{display:none\}`).FindStringSubmatch(out)
			if leaf != "" && (active == nil || !slices.Equal(shown[active[1]], byTip[leaf])) {
				t.Errorf("the page does not open on the leaf's branch")
			}
		})
	}
}

// TestMarkdownTreeListsEveryBranch checks that --tree names every tip.
func TestMarkdownTreeListsEveryBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range names() {
		st := load(t, fixtures[name])
		_, list, _ := strings.Cut(markdown(t, loadShare(t, st), view.MarkdownOptions{Tree: true}), "## Branches\n")
		log, err := st.Log(ctx, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		parents := map[string]bool{}
		for _, e := range log {
			parents[e.ParentID] = true
		}
		for _, e := range log {
			if e.Type != sessiontree.TypeLeaf && !parents[e.ID] && !strings.Contains(list, "ends at "+view.ShortID(e.ID)+" ") {
				t.Errorf("%s: the branch list does not name the tip %s", name, e.ID)
			}
		}
	}
}

// BenchmarkShare writes the largest pi 1.6.0 fixture (1,478 entries, 149
// branches) as Markdown with its branch list, and as HTML.
func BenchmarkShare(b *testing.B) {
	s := loadShare(b, load(b, "../testdata/pi1/session-003.jsonl"))
	b.Run("markdown", func(b *testing.B) {
		for b.Loop() {
			if err := view.WriteMarkdown(io.Discard, s, view.MarkdownOptions{Tree: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("html", func(b *testing.B) {
		for b.Loop() {
			if err := view.WriteHTML(io.Discard, s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestHTMLContentSecurityPolicy checks the page, which runs no script of
// its own, tells the browser to run none at all: whatever a hole in the
// escaping let through, no script, frame, form or fetched resource would
// work, only the page's own style and inline images.
func TestHTMLContentSecurityPolicy(t *testing.T) {
	t.Parallel()
	out := page(t, loadShare(t, load(t, fixtures[shareFixtures[0]])))
	const csp = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">`
	head, _, ok := strings.Cut(out, "<title>")
	if !ok || !strings.Contains(head, csp) {
		t.Errorf("the page's head has no Content-Security-Policy %s before its first content:\n%s", csp, head)
	}
}
