package sessiontree_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"regexp"
	"testing"
)

// TestReadmeGoExample keeps the README's Go program true: the body of its
// main is, statement for statement, the body of Example (comments aside),
// which runs with its output checked. An edit of one without the other
// fails here.
//
// The README's other examples are run where their runner is: its shell
// lines (and every command's --help examples) by cmd/sessiontree's
// TestDocExamples, its Python and TypeScript by server's TestExamples.
func TestReadmeGoExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) != 1 {
		t.Fatalf("README.md has %d Go blocks, want 1", len(blocks))
	}
	want := funcBody(t, "README.md", blocks[0][1], "main")
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if got := funcBody(t, "example_test.go", src, "Example"); got != want {
		t.Errorf("README.md's main is not example_test.go's Example:\n--- README\n%s\n--- Example\n%s", want, got)
	}
}

// funcBody prints the body of the function name of the Go file src,
// without its comments.
func funcBody(t *testing.T, file string, src []byte, name string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, src, 0)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
			var b bytes.Buffer
			if err := printer.Fprint(&b, token.NewFileSet(), fn.Body); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
	}
	t.Fatalf("%s has no func %s", file, name)
	return ""
}
