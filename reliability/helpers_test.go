package reliability_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// userMessage is a small user message.
func userMessage(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"role": "user", "content": text, "timestamp": 1767225600000})
	return b
}

// imageResult is a tool result carrying an image of n bytes of base64, the
// shape pi's read tool gives a screenshot. Image data is not searchable
// text, so the search index does not grow with it. The bytes come from
// one shared random block, so that making a payload costs a copy.
func imageResult(tag string, n int) json.RawMessage {
	var b strings.Builder
	b.Grow(n + 256)
	fmt.Fprintf(&b, `{"role":"toolResult","toolCallId":"call_%s","toolName":"read","content":[{"type":"text","text":"screenshot %s"},{"type":"image","data":"`, tag, tag)
	for n > 0 {
		k := min(n, len(imageData))
		b.WriteString(imageData[:k])
		n -= k
	}
	b.WriteString(`","mimeType":"image/png"}],"isError":false,"timestamp":1767225600000}`)
	return json.RawMessage(b.String())
}

// imageData is random base64 text that imageResult repeats.
var imageData = func() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 1<<16)
	for i := range b {
		b[i] = alphabet[rng.IntN(64)]
	}
	return string(b)
}()

// openStore opens a store for a test and registers a cleanup that checks
// the whole database (integrity_check, tree invariants, search index)
// and closes it.
func openStore(tb testing.TB, path string, opts store.Options) *store.Store {
	tb.Helper()
	s, err := store.Open(context.Background(), path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Check(context.Background(), ""); err != nil && !errors.Is(err, sessiontree.ErrClosed) {
			tb.Errorf("Check() = %v", err)
		}
		s.Close()
	})
	return s
}

// checkDB opens the SQLite database at path and runs every check there
// is (checkTarget): PRAGMA integrity_check, and the store's Check of
// session id (every session when id is ""): the engine's replay of the
// session against its materialized branch, counters and labels, then the
// search index. It returns the store, open, for more checks.
func checkDB(tb testing.TB, path, id string) *store.Store {
	tb.Helper()
	return checkTarget(tb, path, id)
}

// checkCLI runs `sessiontree check` on the database at path: the same
// checks as checkDB (it runs PRAGMA integrity_check and the store's
// Check), in the command, which is built without the race detector. A
// database holding entries of tens of megabytes takes seconds to check
// under the race detector, and a fraction of one so.
func checkCLI(tb testing.TB, path string) {
	tb.Helper()
	if out := cliOK(tb, "", "--db", path, "check"); !strings.HasPrefix(out, "ok:") {
		tb.Fatalf("sessiontree check:\n%s", out)
	}
}

// logOf returns a session's whole log.
func logOf(tb testing.TB, st sessiontree.Storage) []sessiontree.Entry {
	tb.Helper()
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		tb.Fatalf("Log() = %v", err)
	}
	return log
}

// checkChain checks that log is one unbroken chain: each entry's parent
// is the entry before it, and the leaf is the last.
func checkChain(tb testing.TB, st sessiontree.Storage, log []sessiontree.Entry) {
	tb.Helper()
	for i, e := range log {
		want := ""
		if i > 0 {
			want = log[i-1].ID
		}
		if e.ParentID != want {
			tb.Fatalf("entry %d (%s) has parent %q; want %q: the chain is broken (a sibling branch)", i+1, e.ID, e.ParentID, want)
		}
	}
	leaf, err := st.Leaf(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if len(log) > 0 && leaf != log[len(log)-1].ID {
		tb.Fatalf("Leaf() = %s; want the last entry %s", leaf, log[len(log)-1].ID)
	}
}
