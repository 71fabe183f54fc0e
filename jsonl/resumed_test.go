package jsonl_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree/jsonl"
)

// TestTornLineResumedByPi follows a file through what pi does after a
// crash tore its last line: pi's next open ends the torn line with a
// newline and the resumed session appends after it, so the torn line ends
// up between entries. The default mode reads it as pi does (the torn line
// was never an entry) and reports the line; Strict still refuses it; a
// writable open appends after it, and the file reads the same again.
func TestTornLineResumedByPi(t *testing.T) {
	ctx := context.Background()
	torn := `{"type":"message","id":"cccccccc","parentId":"bbbbbbbb","timest`
	content := lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "aaaaaaaa"), torn, msg("dddddddd", "bbbbbbbb"))
	path := writeFile(t, content)

	_, err := jsonl.Open(ctx, path, jsonl.Options{Mode: jsonl.Strict, ReadOnly: true})
	lineError(t, err, path, 4)

	for _, ro := range []bool{true, false} {
		st := open(t, path, jsonl.Options{ReadOnly: ro})
		if got := logIDs(t, st); !cmp.Equal(got, []string{"aaaaaaaa", "bbbbbbbb", "dddddddd"}) {
			t.Errorf("Log() = %v; want the entries around the torn line", got)
		}
		r := st.Report()
		if len(r.Warnings) != 1 || r.Torn != nil || r.Entries != 3 || r.Lines != 5 {
			t.Fatalf("Report() = %+v; want one warning, no torn tail, 3 entries of 5 lines", r)
		}
		lineError(t, r.Warnings[0], path, 4)
		if !strings.Contains(r.Warnings[0].Error(), "torn line") {
			t.Errorf("warning %v; want it to say torn line", r.Warnings[0])
		}
		if ro {
			continue
		}
		e := appendUser(t, st, "after the resume")
		if e.ParentID != "dddddddd" {
			t.Errorf("appended entry's parent = %q; want dddddddd", e.ParentID)
		}
		if got, want := readFile(t, path), content+string(e.Raw)+"\n"; got != want {
			t.Errorf("file after append =\n%s\nwant\n%s", got, want)
		}
		_ = st.Close()
	}
	// The records of a read: the torn line is skipped, not torn (it is
	// not the last line), and the read goes on after it.
	var kinds []jsonl.RecordKind
	for rec, err := range jsonl.ReadFile(ctx, path, jsonl.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, rec.Kind)
		if rec.Kind == jsonl.KindSkipped && (rec.Line != 4 || string(rec.Data) != torn) {
			t.Errorf("skipped record at line %d holds %q; want line 4, the torn bytes", rec.Line, rec.Data)
		}
	}
	want := []jsonl.RecordKind{jsonl.KindHeader, jsonl.KindEntry, jsonl.KindEntry, jsonl.KindSkipped, jsonl.KindEntry, jsonl.KindEntry}
	if !cmp.Equal(kinds, want) {
		t.Errorf("record kinds %v; want %v", kinds, want)
	}
}

// TestPiEdgeTornThenResumedReported: the file pi wrote after a crash and
// a resume opens in the default mode with its torn line, line 7, named in
// the report (TestPiEdgeFiles checks the answers).
func TestPiEdgeTornThenResumedReported(t *testing.T) {
	path := filepath.Join("..", "testdata", "piedge", "torn-then-resumed.jsonl")
	st := open(t, path, jsonl.Options{ReadOnly: true})
	r := st.Report()
	if len(r.Warnings) != 1 || r.Torn != nil {
		t.Fatalf("Report() = %+v; want the one torn line", r)
	}
	lineError(t, r.Warnings[0], path, 7)
	if !strings.Contains(r.Warnings[0].Error(), "torn line: 40 bytes") {
		t.Errorf("warning %v; want it to say torn line: 40 bytes", r.Warnings[0])
	}
}
