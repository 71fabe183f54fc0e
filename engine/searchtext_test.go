package engine_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/migrate"
)

// viewOf is the CREATE VIEW search_text statement of migration file name,
// renamed to view.
func viewOf(t *testing.T, file, view string) string {
	t.Helper()
	b, err := fs.ReadFile(migrate.Files, file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "CREATE VIEW search_text")
	end := strings.Index(text[max(start, 0):], ";")
	if start < 0 || end < 0 {
		t.Fatalf("%s has no search_text view", file)
	}
	return strings.Replace(text[start:start+end], "search_text", view, 1)
}

// searchTextDB is a database of one entries table (pk, type, raw) holding
// the given entries' JSON, with migration 10's search_text view as
// old_text and migration 13's as new_text.
func searchTextDB(t *testing.T, raws []string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open(testdb.EngineDriver(), "file:"+filepath.Join(t.TempDir(), "text.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{
		`CREATE TABLE entries (pk INTEGER PRIMARY KEY, type TEXT NOT NULL, raw TEXT NOT NULL)`,
		viewOf(t, "0010_search_text_cap.sql", "old_text"),
		viewOf(t, "0013_search_text_walk.sql", "new_text"),
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	tx := db.MustBegin()
	for _, raw := range raws {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(raw), &head); err != nil {
			t.Fatalf("%.80s: %v", raw, err)
		}
		if _, err := tx.Exec(`INSERT INTO entries (type, raw) VALUES (?, ?)`, head.Type, raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

// compareSearchTexts fails for every entry whose text differs between the
// two views (in bytes, or in having a row), and returns how many entries
// have a text.
func compareSearchTexts(t *testing.T, db *sqlx.DB) int {
	t.Helper()
	rows, err := db.Queryx(`SELECT e.pk, substr(e.raw, 1, 120), CAST(o.body AS BLOB), CAST(n.body AS BLOB), typeof(o.body), typeof(n.body)
FROM entries e LEFT JOIN old_text o ON o.pk = e.pk LEFT JOIN new_text n ON n.pk = e.pk ORDER BY e.pk`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	texts := 0
	for rows.Next() {
		var pk int64
		var head string
		var old, new []byte
		var oldType, newType string
		if err := rows.Scan(&pk, &head, &old, &new, &oldType, &newType); err != nil {
			t.Fatal(err)
		}
		if oldType != newType || !bytes.Equal(old, new) {
			t.Errorf("entry %d %s…: new text (%s, %d bytes) %q…%q; old (%s, %d bytes) %q…%q", pk, head,
				newType, len(new), clip(new, 60), tail(new, 20), oldType, len(old), clip(old, 60), tail(old, 20))
		}
		if old != nil {
			texts++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return texts
}

func clip(b []byte, n int) []byte { return b[:min(n, len(b))] }
func tail(b []byte, n int) []byte { return b[max(0, len(b)-n):] }

// fixtureLines is every line of every pi file of testdata/pi and
// testdata/pi1.
func fixtureLines(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, dir := range []string{"pi", "pi1"} {
		files, err := filepath.Glob(filepath.Join("..", "testdata", dir, "*.jsonl"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no pi files in testdata/%s: %v", dir, err)
		}
		for _, file := range files {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				if line := strings.TrimSpace(sc.Text()); line != "" && json.Valid([]byte(line)) {
					lines = append(lines, line)
				}
			}
			f.Close()
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return lines
}

// TestSearchTextFixtures: migration 13's view gives every entry of the pi
// fixtures exactly the text migration 10's gave, so nothing indexed
// before needs indexing again.
func TestSearchTextFixtures(t *testing.T) {
	lines := fixtureLines(t)
	db := searchTextDB(t, lines)
	if n := compareSearchTexts(t, db); n < 200 {
		t.Errorf("%d of %d fixture entries have a text; want the fixtures' messages", n, len(lines))
	}
}

// TestSearchTextCases: the same on entries made to reach every rule:
// cuts at the cap inside a character and an escape, parts past the cap,
// nested and odd content, unknown and non-text blocks, numbers and other
// non-string values, escapes and duplicate keys.
func TestSearchTextCases(t *testing.T) {
	t.Parallel()
	const limit = sessiontree.SearchTextLimit
	// Past the cap by a quarter: three times the cap, as it was, took
	// 2.5 s more of CPU (the views copy each text at every step of their
	// walk) and takes no other path.
	big := strings.Repeat("log line of a build\\n", limit/16)
	accents := "x" + strings.Repeat("é", limit) // cut inside an é
	escapes := strings.Repeat("a", limit-1) + `\u00e9\u4e2d`
	msg := func(m string) string {
		return `{"type":"message","id":"m","parentId":null,"timestamp":"t","message":` + m + `}`
	}
	content := func(c string) string { return msg(`{"role":"user","content":` + c + `}`) }
	cases := []string{
		content(`"plain"`), content(`""`), content(`[]`), content(`null`), content(`12`),
		content(`"` + big + `"`), content(`"` + accents + `"`), content(`"` + escapes + `"`),
		content(`[{"type":"text","text":"` + big + `"},{"type":"text","text":"after the cap"}]`),
		content(`[{"type":"text","text":"` + strings.Repeat("b", limit-1) + `"},"second"]`),
		content(`[{"type":"text","text":"` + strings.Repeat("b", limit) + `"},"second"]`),
		content(`[["nested","array"],{"type":"text","text":"x"},[{"type":"text","text":"deeper"}]]`),
		content(`[{"type":"image","data":"aGVsbG8=","mimeType":"image/png"},{"type":"foo","text":"unknown"},{"text":"no type"}]`),
		content(`[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":"answer"}]`),
		content(`[{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"ls","n":2,"deep":[{"a":"x"},["y",true,null]],"e":""}}]`),
		content(`[{"type":"toolCall","arguments":{}},{"type":"toolCall"},{"type":"toolCall","arguments":"just a string"}]`),
		content(`[{"type":"toolCall","arguments":{"a":"` + big + `","b":"` + big + `"}}]`),
		content(`[{"type":"toolCall","arguments":{"a":"` + strings.Repeat("c", limit-1) + `","b":"d"}}]`),
		content(`[{"type":"text","text":1.5},{"type":"text","text":100000},{"type":"text","text":1e5},{"type":"text","text":1E100},{"type":"text","text":0.1},{"type":"text","text":-0}]`),
		content(`[{"type":"text","text":123456789012345678901},{"type":"text","text":-2.5e-7},{"type":"text","text":3.14159265358979323846},{"type":"text","text":1e400}]`),
		content(`[{"type":"text","text":true},{"type":"text","text":false},{"type":"text","text":null},{"type":"text"},{"type":"text","text":""}]`),
		content(`[{"type":"text","text":{ "a" : [ 1, "x y" , {"b":null} ] }},{"type":"thinking","thinking":[ ]}]`),
		content(`[{"type":"t\u0065xt","text":"escaped type"},{"type":"text","type":"image","text":"first type counts"},{"type":"text","text":"first","text":"second"}]`),
		content(`{"k":{"type":"text","text":"in an object"},"s":"a string member","k":{"type":"text","text":"second k"}}`),
		content(`"nul \u0000 inside, lone \ud800 and \udc00, pair \ud83d\ude00, escapes \" \\ \/ \b \f \n \r \t"`),
		content("[ {\n\t\"type\" : \"text\" , \"text\" : \"spaced\" } , \"raw \xff bytes\" ]"),
		msg(`{"role":"bashExecution","command":"make","output":"` + big + `","exitCode":0}`),
		msg(`{"role":"bashExecution","command":"","output":null}`),
		msg(`{"role":"bashExecution","command":"go test","output":"ok","content":"first"}`),
		msg(`{"role":"user","content":"one","content":"two"}`),
		`{"type":"message","message":{"content":"dup message"},"message":{"content":"second"}}`,
		`{"type":"message","id":"m"}`,
		`{"type":"custom_message","customType":"x","content":"custom","display":true}`,
		`{"type":"custom_message","content":[{"type":"text","text":"a"},{"type":"thinking","thinking":"not here"},{"type":"toolCall","arguments":{"a":"nor here"}},"b",3]}`,
		`{"type":"custom_message","content":[{"type":"text","text":"` + big + `"}]}`,
		`{"type":"compaction","summary":"the summary","firstKeptEntryId":"x","tokensBefore":1}`,
		`{"type":"compaction","summary":"` + accents + `"}`,
		`{"type":"compaction","summary":""}`, `{"type":"compaction"}`,
		`{"type":"branch_summary","summary":{"odd":"object"}}`,
		`{"type":"session_info","name":"my session"}`, `{"type":"session_info","name":123}`,
		`{"type":"session_info","name":-7.25}`,
		`{"type":"model_change","provider":"p","modelId":"m"}`, `{"type":"label","label":"text"}`,
	}
	db := searchTextDB(t, cases)
	// Eleven have no text: the messages of content "", [], null and 12,
	// of an empty command and null output, and of no message; the
	// compactions of an empty and of no summary; model_change and label.
	if n := compareSearchTexts(t, db); n != len(cases)-11 {
		t.Errorf("%d of %d cases have a text; want all but 11", n, len(cases))
	}
	var long int
	if err := db.Get(&long, `SELECT count(*) FROM new_text WHERE octet_length(body) = ?`, limit+2); err != nil || long < 8 {
		t.Errorf("%d texts at the cap (%v); want the cases past it", long, err)
	}
}
