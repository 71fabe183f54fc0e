package pgengine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// TestBranchPathPlan: a resume's path (an entry on the active branch) is
// one statement that reads the entries it returns by key, not a scan of
// the session (EXPLAIN on a session of 3,000 entries, analyzed), and it
// answers for an entry on the branch only.
func TestBranchPathPlan(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, searchTemplate.Database(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	entries := make([]sessiontree.Entry, 3000)
	parent := ""
	for i := range entries {
		f, _ := sessiontree.Fields("customType", "step", "data", i)
		e, err := sessiontree.BuildEntry(sessiontree.Draft{Type: sessiontree.TypeCustom, Fields: f}, fmt.Sprintf("%08x", i+1), parent, "2026-01-01T00:00:00.000Z")
		if err != nil {
			t.Fatal(err)
		}
		entries[i], parent = e, e.ID
	}
	if err := st.AppendBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := db.db.ExecContext(ctx, `ANALYZE`); err != nil {
				t.Fatal(err)
			}
		}
		var plan []string
		if err := db.db.SelectContext(ctx, &plan, `EXPLAIN `+branchPathQuery, st.pk, parent, true); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		t.Logf("analyzed %v:\n%s", analyzed, text)
		// Before the server analyzed the batch, a scan may be planned, but
		// never one run per row of another (a correlated SubPlan).
		if strings.Contains(text, "SubPlan") || analyzed && strings.Contains(text, "Seq Scan on entries") {
			t.Errorf("analyzed %v: the branch path scans the entries, or scans per row:\n%s", analyzed, text)
		}
	}
	path, ok, err := st.branchPath(ctx, parent, true)
	if err != nil || !ok || len(path) != len(entries) || path[0].ID != entries[0].ID {
		t.Errorf("branchPath(leaf) = %d entries, %v, %v; want the %d of the session", len(path), ok, err, len(entries))
	}
	if _, err := st.SetLeaf(ctx, entries[10].ID, sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.branchPath(ctx, parent, true); ok || err != nil {
		t.Errorf("branchPath(off the branch) = %v, %v; want no answer, for the walk", ok, err)
	}
	if path, err := st.FullPath(ctx, parent); err != nil || len(path) != len(entries) {
		t.Errorf("FullPath(off the branch) = %d entries, %v; want %d", len(path), err, len(entries))
	}
}
