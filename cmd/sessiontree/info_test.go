package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInfoMetadata: info shows the metadata a session was made with, as
// ls --json does: info --json as given (null when none, as for a pi
// file), the text output on one "metadata" line, compacted, only when
// there is metadata; a fork without --metadata carries its source's.
func TestInfoMetadata(t *testing.T) {
	t.Parallel()
	onCLIEngines(t, func(t *testing.T, db string) {
		const given = "{ \"ticket\": 7,\n  \"note\": \"two\\nlines\" }"
		id := strings.TrimSpace(ok(t, "--db", db, "new", "--metadata", given))
		plain := strings.TrimSpace(ok(t, "--db", db, "new"))
		var in struct {
			Metadata json.RawMessage `json:"metadata"`
		}
		decode(t, ok(t, "--db", db, "info", id, "--json"), &in)
		var got, want any
		if err := json.Unmarshal(in.Metadata, &got); err != nil {
			t.Fatalf("info --json metadata %q: %v", in.Metadata, err)
		}
		_ = json.Unmarshal([]byte(given), &want)
		if !cmp.Equal(got, want) {
			t.Errorf("info --json metadata = %s; want %s", in.Metadata, given)
		}
		if out := ok(t, "--db", db, "info", plain, "--json"); !strings.Contains(out, `"metadata":null`) {
			t.Errorf("info --json of a session without metadata = %s; want \"metadata\":null", out)
		}

		wantLine := "metadata     {\"ticket\":7,\"note\":\"two\\nlines\"}\n"
		if out := ok(t, "--db", db, "info", id); !strings.Contains(out, wantLine) {
			t.Errorf("info shows\n%s\nwant the line %q", out, wantLine)
		}
		if out := ok(t, "--db", db, "info", plain); strings.Contains(out, "metadata") {
			t.Errorf("info of a session without metadata shows\n%s\nwant no metadata line", out)
		}

		forked := strings.TrimSpace(ok(t, "--db", db, "fork", id))
		if out := ok(t, "--db", db, "info", forked); !strings.Contains(out, wantLine) {
			t.Errorf("info of a fork shows\n%s\nwant its source's metadata, %q", out, wantLine)
		}
	})
	if out := ok(t, "info", "../../testdata/pi/session-002.jsonl", "--json"); !strings.Contains(out, `"metadata":null`) {
		t.Errorf("info --json of a pi file = %s; want \"metadata\":null", out)
	}
}
