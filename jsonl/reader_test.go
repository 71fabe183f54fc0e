package jsonl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// collect reads all records, failing the test on error.
func collect(t testing.TB, path string, opts jsonl.ReadOptions) []jsonl.Record {
	t.Helper()
	var out []jsonl.Record
	for rec, err := range jsonl.ReadFile(context.Background(), path, opts) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

func TestReadLinesAndOffsets(t *testing.T) {
	content := lines(testHeader, msg("aaaaaaaa", ""), "", "  ", msg("bbbbbbbb", "aaaaaaaa")) + "\r\n" + msg("cccccccc", "bbbbbbbb") + "\r\n"
	path := writeFile(t, content)
	recs := collect(t, path, jsonl.ReadOptions{})
	if len(recs) != 4 || recs[0].Kind != jsonl.KindHeader {
		t.Fatalf("got %d records, first of kind %d; want the header and 3 entries", len(recs), recs[0].Kind)
	}
	if h := recs[0].Header; h.ID != "0190a000-0000-7000-8000-000000000001" || h.Version != 3 || h.Cwd != "/p" || string(h.Raw) != testHeader {
		t.Errorf("header = %+v", h)
	}
	wantLines := []int{1, 2, 5, 7}
	for i, rec := range recs {
		if rec.Line != wantLines[i] {
			t.Errorf("record %d at line %d; want %d", i, rec.Line, wantLines[i])
		}
		// The offset is where the line starts in the file.
		nth := strings.SplitAfter(content, "\n")[rec.Line-1]
		if !strings.HasPrefix(content[rec.Offset:], nth) {
			t.Errorf("record %d offset %d does not start line %d", i, rec.Offset, rec.Line)
		}
		if i > 0 && string(rec.Entry.Raw) != strings.TrimSpace(nth) {
			t.Errorf("record %d Raw = %s; want %s", i, rec.Entry.Raw, nth)
		}
	}
	last := recs[len(recs)-1].Next
	if last.Offset != int64(len(content)) || last.Line != 7 || last.Version != 3 {
		t.Errorf("last Next = %+v; want the end of the file, line 7", last)
	}
}

func TestReadResumeAfterGrowth(t *testing.T) {
	ctx := context.Background()
	part1 := lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "aaaaaaaa"))
	path := writeFile(t, part1)
	recs := collect(t, path, jsonl.ReadOptions{})
	pos := recs[len(recs)-1].Next

	// The file grows by an entry and a line still being written.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line3 := msg("cccccccc", "bbbbbbbb")
	line4 := msg("dddddddd", "cccccccc")
	f.WriteString(line3 + "\n" + line4[:30])
	recs = collect(t, path, jsonl.ReadOptions{Resume: &pos})
	if len(recs) != 2 || recs[0].Kind != jsonl.KindEntry || recs[0].Entry.ID != "cccccccc" || recs[0].Line != 4 || recs[0].Offset != int64(len(part1)) {
		t.Fatalf("resumed records = %+v; want entry cccccccc at line 4, then the torn line", recs)
	}
	torn := recs[1]
	if torn.Kind != jsonl.KindTorn || torn.Line != 5 || string(torn.Data) != line4[:30] || torn.Next.Offset != torn.Offset || torn.Next.Line != 4 {
		t.Fatalf("torn record = %+v", torn)
	}
	// Strict mode refuses the partial line.
	for _, err := range jsonl.ReadFile(ctx, path, jsonl.ReadOptions{Resume: &pos, Mode: jsonl.Strict}) {
		if err != nil {
			lineError(t, err, path, 5)
		}
	}
	// The writer finishes the line; resuming at the torn record reads it.
	f.WriteString(line4[30:] + "\n")
	recs = collect(t, path, jsonl.ReadOptions{Resume: &torn.Next})
	if len(recs) != 1 || recs[0].Entry.ID != "dddddddd" || recs[0].Line != 5 {
		t.Fatalf("records after the line was finished = %+v", recs)
	}
	if end := recs[0].Next; end.Offset != int64(len(readFile(t, path))) || end.Line != 5 {
		t.Errorf("Next = %+v; want the end of the file", end)
	}
	// Nothing new: nothing read.
	if recs := collect(t, path, jsonl.ReadOptions{Resume: &recs[0].Next}); len(recs) != 0 {
		t.Errorf("resuming at the end gave %d records", len(recs))
	}
}

func TestReadResumeV1KeepsIDs(t *testing.T) {
	path := filepath.Join("..", "testdata", "pi", "legacy-v1-compaction.jsonl")
	full := collect(t, path, jsonl.ReadOptions{Mode: jsonl.Strict})
	for cut := 1; cut < len(full); cut++ {
		rest := collect(t, path, jsonl.ReadOptions{Resume: &full[cut-1].Next})
		if len(rest) != len(full)-cut {
			t.Fatalf("resuming after record %d gave %d records; want %d", cut, len(rest), len(full)-cut)
		}
		for i, rec := range rest {
			want := full[cut+i]
			if string(rec.Entry.Raw) != string(want.Entry.Raw) || rec.Line != want.Line || rec.Offset != want.Offset {
				t.Errorf("resumed after %d: record %d = line %d %s; want line %d %s", cut, i, rec.Line, rec.Entry.Raw, want.Line, want.Entry.Raw)
			}
		}
	}
}

func TestReadHugeLines(t *testing.T) {
	big := strings.Repeat("x", 6<<20)
	huge := `{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa",` + ts + `,"message":{"role":"toolResult","content":"` + big + `"}}`
	content := lines(testHeader, msg("aaaaaaaa", ""), huge, msg("cccccccc", "bbbbbbbb"))
	path := writeFile(t, content)
	recs := collect(t, path, jsonl.ReadOptions{Mode: jsonl.Strict})
	if len(recs) != 4 || len(recs[2].Entry.Raw) != len(huge) || recs[3].Entry.ID != "cccccccc" || recs[3].Line != 4 {
		t.Fatalf("read %d records; want 4 with the 6 MB line whole", len(recs))
	}
	var err error
	for _, err = range jsonl.ReadFile(context.Background(), path, jsonl.ReadOptions{MaxLineBytes: 1 << 20}) {
		if err != nil {
			break
		}
	}
	if le := lineError(t, err, path, 3); !strings.Contains(le.Error(), "longer than") {
		t.Errorf("error = %v; want a line too long", le)
	}
	st := open(t, path, jsonl.Options{ReadOnly: true})
	c := contextOf(t, st)
	if len(c.Messages) != 3 || len(c.Messages[1]) < 6<<20 {
		t.Errorf("context has %d messages; want 3 with the big one", len(c.Messages))
	}
}

func TestReadStopsEarlyAndErrors(t *testing.T) {
	ctx := context.Background()
	path := writeFile(t, lines(testHeader, msg("aaaaaaaa", ""), msg("bbbbbbbb", "aaaaaaaa")))
	n := 0
	for range jsonl.ReadFile(ctx, path, jsonl.ReadOptions{}) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("breaking out of the loop read %d records", n)
	}
	for _, err := range jsonl.ReadFile(ctx, filepath.Join(t.TempDir(), "missing.jsonl"), jsonl.ReadOptions{}) {
		if !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("ReadFile(missing) error = %v; want ErrNotFound", err)
		}
	}
	for _, err := range jsonl.Read(ctx, strings.NewReader(""), jsonl.ReadOptions{Resume: &jsonl.Position{}}) {
		if err == nil || !strings.Contains(err.Error(), "position") {
			t.Errorf("Read(zero position) error = %v; want a bad position", err)
		}
	}
	// Read from any io.Reader; errors name the given file name.
	for _, err := range jsonl.Read(ctx, bytes.NewReader([]byte(testHeader+"\nnope\n")), jsonl.ReadOptions{Name: "stdin"}) {
		if err != nil {
			lineError(t, err, "stdin", 2)
		}
	}
	for _, err := range jsonl.Read(ctx, iotestErrReader{}, jsonl.ReadOptions{}) {
		if !errors.Is(err, sessiontree.ErrStorage) {
			t.Errorf("Read(failing reader) error = %v; want ErrStorage", err)
		}
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestParseLineAndHeader(t *testing.T) {
	e, err := jsonl.ParseLine([]byte("  " + msg("aaaaaaaa", "") + "\r\n"))
	if err != nil || e.ID != "aaaaaaaa" || e.Type != sessiontree.TypeMessage || string(e.Raw) != msg("aaaaaaaa", "") {
		t.Errorf("ParseLine = %+v, %v", e, err)
	}
	if _, err := jsonl.ParseLine([]byte(`{"type":"label","id":"x","parentId":null,` + ts + `}`)); !errors.Is(err, sessiontree.ErrInvalidEntry) {
		t.Errorf("ParseLine(label without target) error = %v; want ErrInvalidEntry", err)
	}
	h, err := jsonl.ParseHeader([]byte(`{"type":"session","id":"s",` + ts + `,"parentSession":null,"extra":[1]}`))
	want := sessiontree.SessionMeta{ID: "s", Version: 1, CreatedAt: "2026-01-01T00:00:01.000Z"}
	if err != nil || !cmp.Equal(h.SessionMeta, want) {
		t.Errorf("ParseHeader = %+v, %v; want %+v", h.SessionMeta, err, want)
	}
}

// A size hint only sizes the read's buffers: whatever it says, even
// wrong, a read yields the same records, lines longer than the buffer
// and bytes past the hinted size included.
func TestReadSizeHint(t *testing.T) {
	ls := []string{testHeader}
	parent := ""
	for i := range 300 {
		id := fmt.Sprintf("%08x", i+1)
		line := msg(id, parent)
		if i%50 == 7 { // longer than the smallest buffer
			line = strings.Replace(line, `"content":"`, `"content":"`+strings.Repeat("long ", 2000), 1)
		}
		ls = append(ls, line)
		parent = id
	}
	content := lines(ls...)
	path := writeFile(t, content)
	var want []jsonl.Record
	for rec, err := range jsonl.Read(context.Background(), strings.NewReader(content), jsonl.ReadOptions{Name: path}) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, rec)
	}
	if len(want) != 301 {
		t.Fatalf("read %d records without a hint; want 301", len(want))
	}
	for _, hint := range []int64{0, 1, 100, 5000, int64(len(content)), 1 << 30} {
		if got := collect(t, path, jsonl.ReadOptions{SizeHint: hint}); !reflect.DeepEqual(got, want) {
			t.Errorf("ReadFile with SizeHint %d: %d records differ from a read without one", hint, len(got))
		}
	}
}
