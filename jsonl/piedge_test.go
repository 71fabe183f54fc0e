package jsonl_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
	"github.com/sessiontree/sessiontree/storetest"
)

// edgeWant is how sessiontree answers a file of testdata/piedge: in mode,
// the same as pi; or, where refused is set, with a refusal naming line
// and saying refused.
type edgeWant struct {
	mode    jsonl.Mode
	refused string
	line    int
}

// piEdge lists the files of testdata/piedge where sessiontree does not
// open the file in the default mode with pi's answers. README.md there
// tells why for each: pi refuses or loops too, or pi reads damage that
// sessiontree reports (Lenient skips it as pi does).
var piEdge = map[string]edgeWant{
	"bom":                     {refused: "starts with a UTF-8 byte order mark", line: 1},
	"blank-only":              {refused: "empty file", line: 4},
	"header-id-number":        {refused: `"id" must be a string`, line: 1},
	"header-not-first":        {refused: "missing header", line: 1},
	"header-after-garbage":    {refused: "malformed header", line: 1},
	"header-no-timestamp":     {refused: `missing "timestamp"`, line: 1},
	"version-string":          {refused: `"version" must be a number`, line: 1},
	"version-0":               {refused: "unsupported session file version", line: 1},
	"version-fraction":        {refused: "unsupported session file version", line: 1},
	"version-4":               {refused: "newer than 3", line: 1},
	"cycle-on-path":           {refused: "cycle in parent ids: x1 -> x2 -> x1", line: 5},
	"cycle-off-path":          {refused: "cycle in parent ids: x1 -> x2 -> x1", line: 5},
	"self-parent":             {refused: "its own parent", line: 5},
	"dup-id":                  {refused: "duplicate id with different content (first at line 3)", line: 7},
	"dup-line":                {refused: "duplicate of line 4", line: 5},
	"parent-empty-string":     {refused: `"parentId" must be null or a non-empty id`, line: 5},
	"missing-parent":          {refused: "parent l1 does not exist", line: 5},
	"branch-summary-null":     {refused: `"summary" must be a string`, line: 4},
	"bad-middle-line":         {mode: jsonl.Lenient},
	"non-object-lines":        {mode: jsonl.Lenient},
	"second-header":           {mode: jsonl.Lenient},
	"line-unicode-space":      {mode: jsonl.Lenient},
	"v1-kept-after-bad-lines": {mode: jsonl.Lenient},
	"v1-kept-after-null-line": {mode: jsonl.Lenient},
}

// TestPiEdgeFiles opens every file of testdata/piedge, tricky input with
// pi 1.6.0's own answers (written by gen.mjs there), and checks
// sessiontree gives pi's answers, or refuses the file as piEdge says with
// an error naming the line. A file pi refuses, or loops on, must be
// refused.
func TestPiEdgeFiles(t *testing.T) {
	for _, fx := range storetest.PiFixtures(t, filepath.Join("..", "testdata", "piedge")) {
		t.Run(fx.Name, func(t *testing.T) { checkPiFile(t, fx, piEdge[fx.Name]) })
	}
}

// TestPiRandFiles opens every random file of testdata/pirand (written by
// gen.mjs there, with pi 1.6.0's answers) and checks sessiontree gives
// pi's answers: none is refused.
func TestPiRandFiles(t *testing.T) {
	for _, fx := range storetest.PiRandFixtures(t, filepath.Join("..", "testdata", "pirand")) {
		t.Run(fx.Name, func(t *testing.T) { checkPiFile(t, fx, edgeWant{}) })
	}
}

// checkPiFile opens the file of fx and checks sessiontree gives pi's
// answers, or refuses the file as want says with an error naming the line.
func checkPiFile(t *testing.T, fx storetest.PiFixture, want edgeWant) {
	t.Helper()
	st, err := jsonl.Open(context.Background(), fx.Path, jsonl.Options{ReadOnly: true, Mode: want.mode})
	if want.refused != "" {
		checkRefused(t, err, want)
		return
	}
	extra := piExtras(t, fx.Path)
	if extra.Error != "" || extra.Loops {
		t.Fatalf("pi refuses or loops on %s; piEdge must say how sessiontree refuses it", fx.Name)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.CheckPi(t, st, fx.Want)
	storetest.CheckSystemSnapshot(t, st, extra.SystemSnapshot)
}

func checkRefused(t *testing.T, err error, want edgeWant) {
	t.Helper()
	var le *jsonl.LineError
	switch {
	case err == nil:
		t.Fatalf("Open succeeded; want it refused at line %d: %s", want.line, want.refused)
	case !errors.As(err, &le) || le.Line != want.line:
		t.Errorf("Open: %v; want a *LineError at line %d", err, want.line)
	case !errors.Is(err, sessiontree.ErrCorrupt) && !errors.Is(err, jsonl.ErrUnsupportedVersion):
		t.Errorf("Open: %v; want ErrCorrupt or ErrUnsupportedVersion", err)
	case !strings.Contains(err.Error(), want.refused):
		t.Errorf("Open: %v; want it to say %q", err, want.refused)
	}
}

// piAnswer holds what pi's answers in testdata/piedge add to those of
// storetest.PiExpected.
type piAnswer struct {
	// Error is what pi threw opening the file; Loops says it never
	// returned.
	Error string `json:"error"`
	Loops bool   `json:"loops"`
	// SystemSnapshot is pi's replay of the system messages in the context
	// at the leaf, what appendCompaction stores, stamped 1.
	SystemSnapshot json.RawMessage `json:"systemSnapshot"`
}

func piExtras(t *testing.T, path string) piAnswer {
	t.Helper()
	raw, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + ".expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var a piAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	return a
}
