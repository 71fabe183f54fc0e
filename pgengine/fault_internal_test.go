package pgengine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// Connection faults at chosen points of the protocol (pgtest.Proxy):
// whatever the fault, every append acknowledged is stored once, and an
// append that failed is stored at most once.

// faultDB opens a database of t's own twice: through a fault proxy
// (what the test drives) and directly (what it reads back with, and
// checks when t ends).
func faultDB(t *testing.T) (proxied, direct *DB, p *pgtest.Proxy) {
	t.Helper()
	url := pgtest.Migrated.Database(t)
	p = pgtest.NewProxy(t, url)
	var err error
	if direct, err = Open(context.Background(), url, Options{}); err != nil {
		t.Fatal(err)
	}
	if proxied, err = Open(context.Background(), p.URL(url), Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.SetFault(nil)
		proxied.Close()
		if err := direct.Check(context.Background(), ""); err != nil {
			t.Errorf("integrity check: %v", err)
		}
		direct.Close()
	})
	return proxied, direct, p
}

// once is a fault that answers act to the first message match accepts,
// and passes every other.
func once(act pgtest.Action, match func(m pgtest.Message) bool) pgtest.Fault {
	var done atomic.Bool
	return func(_ int, m pgtest.Message) pgtest.Action {
		if match(m) && done.CompareAndSwap(false, true) {
			return act
		}
		return pgtest.Pass
	}
}

// committed matches the server's reply to a COMMIT that committed.
func committed(m pgtest.Message) bool { return !m.FromClient && m.Tag == "COMMIT" }

// sending matches a statement on its way to the server whose SQL holds s.
func sending(s string) func(m pgtest.Message) bool {
	return func(m pgtest.Message) bool { return m.FromClient && strings.Contains(m.SQL, s) }
}

// logOf returns the log of session id, read on db.
func logOf(t *testing.T, db *DB, id string) []sessiontree.Entry {
	t.Helper()
	st, err := db.OpenStorage(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	log, err := st.Log(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// TestAppendTerminatedAfterCommit: the server commits an append and is
// then told to stop (pg_terminate_backend, a fast shutdown) before it
// reads the batch's Sync, so the client reads the COMMIT's reply and then
// a FATAL error (57P01). The append committed: it is not tried again,
// which stored the entry a second time under the first, and returns the
// entry. Both ways of the batch: from the row the Storage kept, and from
// the row locked after another writer's append.
func TestAppendTerminatedAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	proxied, direct, p := faultDB(t)
	st := newStorage(t, proxied)
	if _, err := st.Append(ctx, customDraft(0), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := direct.OpenStorage(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	for i, kept := range []bool{true, false} {
		if !kept {
			if _, err := other.Append(ctx, customDraft(10), sessiontree.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		before := len(logOf(t, direct, st.ID()))
		p.SetFault(once(pgtest.Terminate, committed))
		e, err := st.Append(ctx, customDraft(i+1), sessiontree.AppendOptions{})
		p.SetFault(nil)
		if err != nil {
			t.Errorf("kept row %v: Append = %v; want the entry: its COMMIT's reply arrived", kept, err)
		}
		if log := logOf(t, direct, st.ID()); len(log) != before+1 || log[before].ID != e.ID {
			t.Errorf("kept row %v: Append = %s; the log grew by %d entries; want that one", kept, e.ID, len(log)-before)
		}
	}
}

// TestGroupTerminatedAfterCommit: the same fault on a group's commit.
// Its members committed: none runs again alone (each would store its
// entry a second time), and each is answered its entry.
func TestGroupTerminatedAfterCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	proxied, direct, p := faultDB(t)
	sts := make([]*Storage, 4)
	for i := range sts {
		sts[i] = newStorage(t, proxied)
		if _, err := sts[i].Append(ctx, customDraft(0), sessiontree.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	groupOf(proxied, 4)
	p.SetFault(once(pgtest.Terminate, committed))
	ds := []sessiontree.Draft{customDraft(1), customDraft(2), customDraft(3), customDraft(4)}
	out, errs := appendEach(sts, ds, make([]sessiontree.AppendOptions, 4))
	p.SetFault(nil)
	if g := proxied.group.groups.Load(); g != 1 {
		t.Fatalf("%d groups; want the 4 appends in 1", g)
	}
	for i, st := range sts {
		if errs[i] != nil {
			t.Errorf("append %d = %v; want the entry: the group's COMMIT's reply arrived", i, errs[i])
		}
		if log := logOf(t, direct, st.ID()); len(log) != 2 || log[1].ID != out[i].ID {
			t.Errorf("session %d holds %d entries; want 2, the second %s", i, len(log), out[i].ID)
		}
	}
}

// TestAppendRetriesConnectionDroppedIdle: the network drops the pool's
// connections while they are idle (no error from the server: a proxy or
// a NAT forgetting them), and the next append's batch has a statement
// its connection has not prepared, so pgx's preparation (a Parse and a
// Describe, which run nothing) is what meets the dropped connection.
// Nothing was run: the append is tried again on a new connection and
// stored once, not reported as a commit whose outcome is unknown.
func TestAppendRetriesConnectionDroppedIdle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	proxied, direct, p := faultDB(t)
	st := newStorage(t, proxied)
	if _, err := st.Append(ctx, customDraft(0), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	p.CutAll()
	e, err := st.Append(ctx, customDraft(1), sessiontree.AppendOptions{})
	if err != nil {
		t.Errorf("Append after the connections dropped = %v; want it tried again on a new one", err)
	}
	if log := logOf(t, direct, st.ID()); len(log) != 2 || log[1].ID != e.ID {
		t.Errorf("the log holds %d entries; want 2, the second %s", len(log), e.ID)
	}
}
