package view

import (
	"strings"
	"testing"
)

func TestFenced(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, lang, want string }{
		{"plain", "", "```\nplain\n```"},
		{"a ``` b", "json", "````json\na ``` b\n````"},
		{"`````\nx", "", "``````\n`````\nx\n``````"},
		{"~~~ only", "text", "```text\n~~~ only\n```"},
	}
	for _, tt := range tests {
		if got := fenced(tt.text, tt.lang); got != tt.want {
			t.Errorf("fenced(%q, %q) = %q; want %q", tt.text, tt.lang, got, tt.want)
		}
	}
}

func TestSafeProse(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"no markup, a < b and 1<2", "no markup, a < b and 1<2"},
		{"<script>x</script>", `\<script>x\</script>`},
		{"<!-- hidden -->", `\<!-- hidden -->`},
		{"use `<T>` and ``a ` <b>`` here <i>", "use `<T>` and ``a ` <b>`` here \\<i>"},
		{"an open ` then <b>", "an open ` then \\<b>"},
		{`already \<b> escaped`, `already \<b> escaped`},
		{"```html\n<b>kept in code</b>\n```\n<b>", "```html\n<b>kept in code</b>\n```\n\\<b>"},
		{"```go\nfunc x() {", "```go\nfunc x() {\n```"},
		{"~~~~\ncode\n~~~\nstill code", "~~~~\ncode\n~~~\nstill code\n~~~~"},
		{"````\n```\n````\nout <i>", "````\n```\n````\nout \\<i>"},
		{"[x](javascript:alert(1)) [y](https://example.org)", "[x]\\(javascript:alert(1)) [y](https://example.org)"},
		{"[x]( <JavaScript:alert(1)>)", "[x]\\( \\<JavaScript:alert(1)>)"},
		{"[ref]: javascript:alert(1)", "\\[ref]: javascript:alert(1)"},
		{"[img](data:text/html,x)", "[img]\\(data:text/html,x)"},
		// The destination on the next line, or its scheme written with
		// character references or a tab the browser drops: a renderer
		// still makes a javascript: link of each.
		{"[x](\njavascript:alert(1))", "[x]\\(\njavascript:alert(1))"},
		{"[x](&#106;avascript:alert(1))", "[x]\\(&#106;avascript:alert(1))"},
		{"[x](javascript&colon;alert(1))", "[x]\\(javascript&colon;alert(1))"},
		{"[x](java&#9;script:alert(1))", "[x]\\(java&#9;script:alert(1))"},
		{"[x](&#32;&#1;javascript:alert(1))", "[x]\\(&#32;&#1;javascript:alert(1))"},
		{"[ref]:\n  javascript:alert(1)", "\\[ref]:\n  javascript:alert(1)"},
		{"[ref]: &#x6A;avascript:alert(1)", "\\[ref]: &#x6A;avascript:alert(1)"},
		{"[ok](https://example.org/&#106;) [r]: https://example.org", "[ok](https://example.org/&#106;) [r]: https://example.org"},
		// A definition inside a block quote or a list item defines the
		// link for the whole page.
		{"> [r]: javascript:alert(1)", "> \\[r]: javascript:alert(1)"},
		{"- > 1. [r]:\tjavascript:alert(1)", "- > 1. \\[r]:\tjavascript:alert(1)"},
		{"- [r]: https://example.org", "- [r]: https://example.org"},
		// A fence line indented under a list item: the item's end, not
		// the closing fence, ends that code, so the <script> after it
		// would be HTML to a CommonMark renderer. Written at the line's
		// start, the fence is the page's own and the script stays code.
		{"- ```\n  x\n  ```\n<script>alert(1)</script>", "- ```\n  x\n```\n<script>alert(1)</script>\n```"},
		{"- a\n   ```\n<script>x</script>\n   ```\nout <i>", "- a\n```\n<script>x</script>\n```\nout \\<i>"},
		{"  ~~~\n  <b>\n  ~~~", "~~~\n  <b>\n~~~"},
	}
	for _, tt := range tests {
		if got := safeProse(tt.in); got != tt.want {
			t.Errorf("safeProse(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestMdInline(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"model_change", "model_change"},
		{"_lead and trail_", `\_lead and trail\_`},
		{"a *b* [c](d) <e> `f` # g | h ~ i & j \\ k", `a \*b\* \[c\](d) \<e\> \` + "`f\\`" + ` \# g \| h \~ i \& j \\ k`},
		{"two\nlines", "two lines"},
	}
	for _, tt := range tests {
		if got := mdInline(tt.in); got != tt.want {
			t.Errorf("mdInline(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestDestinationStartReadsLittle: safeProse asks, at every "](" of a
// line, whether the link's destination starts with an unsafe scheme, and
// read the whole rest of the line to answer (decoding its character
// references, dropping its tabs): a line of n links cost n times the
// line, a 280 KB line of links 10 s of CPU, a megabyte minutes, a hang
// to the user of `export --format md`. The answer needs only the
// destination's first characters, and destinationStart now reads only
// those (with what is dropped before them), whatever follows.
func TestDestinationStartReadsLittle(t *testing.T) {
	t.Parallel()
	tail := strings.Repeat("[x](y) ", 1<<17)
	tests := []struct{ rest, next, want string }{
		{"javascript:alert(1)) " + tail, "", "javascript:"},
		{strings.Repeat(" ", 500) + "<JavaScript:x) " + tail, "", "JavaScript:"},
		{strings.Repeat("&#32;", 100) + "java&#9;script&colon;x" + tail, "", "javascript:"},
		{"  ", "&#106;avascript:x" + tail, "javascript:"},
		{"https://example.org/&#106;) " + tail, "", "https://exa"},
		{"data:", "", "data:"},
	}
	for _, tt := range tests {
		got := destinationStart(tt.rest, tt.next)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("destinationStart(%.40q…) = %.40q…; want it to start with %q", tt.rest, got, tt.want)
		}
		if len(got) > 4096 {
			t.Errorf("destinationStart(%.40q…) read %d bytes of the line; want the start only", tt.rest, len(got))
		}
	}
}
