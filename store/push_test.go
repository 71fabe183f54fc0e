package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/store"
)

// pushSource makes a session in s with a header, metadata, a name, a
// label and two branches, and returns it with its builder.
func pushSource(t testing.TB, s *store.Store, id string) (sessiontree.DatabaseSession, *builder) {
	t.Helper()
	st := mustCreate(t, s, store.CreateOptions{ID: id, Cwd: "/home/me/project", ParentSession: "0198f2a4-0000-7000-8000-000000000001",
		Metadata: []byte(`{"agent":"pi","tags":["a"]}`)})
	b := newBuilder(t, st)
	b.user("u1", "hello")
	b.assistant("a1", "hi there")
	b.user("u2", "first try")
	b.moveTo("a1")
	b.user("u3", "second try")
	b.label("l1", "u1", "start")
	b.name("n1", "a session")
	return st, b
}

// wantSameSession fails t unless session id reads the same in both
// stores: header, metadata, every entry byte for byte, leaf, name and
// labels.
func wantSameSession(t testing.TB, from, to *store.Store, id string) {
	t.Helper()
	ctx := context.Background()
	a, err := from.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := to.OpenSession(ctx, id)
	if err != nil {
		t.Fatalf("target: %v", err)
	}
	defer b.Close()
	if diff := cmp.Diff(metaOf(t, a), metaOf(t, b)); diff != "" {
		t.Errorf("Meta differs (-source +target):\n%s", diff)
	}
	ia, err := from.Info(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ib, err := to.Info(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ia, ib); diff != "" {
		t.Errorf("Info differs (-source +target):\n%s", diff)
	}
	la, lb := logOf(t, a), logOf(t, b)
	if len(la) != len(lb) {
		t.Fatalf("target has %d entries; want %d", len(lb), len(la))
	}
	for i := range la {
		if la[i].ID != lb[i].ID || string(la[i].Raw) != string(lb[i].Raw) {
			t.Errorf("entry %d: target %s %s; want %s %s", i+1, lb[i].ID, lb[i].Raw, la[i].ID, la[i].Raw)
		}
	}
	if got, want := leafOf(t, b), leafOf(t, a); got != want {
		t.Errorf("leaf = %q; want %q", got, want)
	}
	if diff := cmp.Diff(labelsOf(t, a), labelsOf(t, b)); diff != "" {
		t.Errorf("labels differ (-source +target):\n%s", diff)
	}
	if got, want := nameOf(t, b), nameOf(t, a); got != want {
		t.Errorf("name = %q; want %q", got, want)
	}
}

// results returns a report's results as session: status pushed, for
// comparison.
func results(rep store.PushReport) map[string]string {
	out := map[string]string{}
	for _, r := range rep.Results {
		out[r.Session] = fmt.Sprintf("%s %d", r.Status, r.Pushed)
	}
	return out
}

func mustPush(t testing.TB, from, to *store.Store, opts store.PushOptions) store.PushReport {
	t.Helper()
	rep, err := store.Push(context.Background(), from, to, opts)
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	return rep
}

// testPushIncremental pushes sessions new to the target, then only what
// was appended since, then nothing.
func testPushIncremental(t *testing.T, from, to *store.Store) {
	const id1, id2 = "0198f2a4-1111-7000-8000-000000000001", "0198f2a4-2222-7000-8000-000000000002"
	_, b := pushSource(t, from, id1)
	mustCreate(t, from, store.CreateOptions{ID: id2, Cwd: "/empty"})

	rep := mustPush(t, from, to, store.PushOptions{})
	if diff := cmp.Diff(map[string]string{id1: "pushed 7", id2: "pushed 0"}, results(rep)); diff != "" {
		t.Errorf("first push (-want +got):\n%s", diff)
	}
	wantSameSession(t, from, to, id1)
	wantSameSession(t, from, to, id2)

	b.assistant("a3", "more")
	b.user("u4", "and more")
	rep = mustPush(t, from, to, store.PushOptions{})
	if diff := cmp.Diff(map[string]string{id1: "pushed 2", id2: "up-to-date 0"}, results(rep)); diff != "" {
		t.Errorf("second push (-want +got):\n%s", diff)
	}
	wantSameSession(t, from, to, id1)

	rep = mustPush(t, from, to, store.PushOptions{})
	if diff := cmp.Diff(map[string]string{id1: "up-to-date 0", id2: "up-to-date 0"}, results(rep)); diff != "" {
		t.Errorf("rerun (-want +got):\n%s", diff)
	}
	if !rep.OK() {
		t.Errorf("OK() = false for %+v", rep)
	}
}

func TestPushIncremental(t *testing.T) {
	t.Parallel()
	testPushIncremental(t, openStore(t), openStore(t))
}

// testPushResumes interrupts a push after its first batch and runs it
// again: the first batch stays, the rerun appends the rest.
func testPushResumes(t *testing.T, from, to *store.Store) {
	const id = "0198f2a4-3333-7000-8000-000000000003"
	pushSource(t, from, id)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := store.Push(ctx, from, to, store.PushOptions{BatchEntries: 3, Progress: func(p store.PushProgress) {
		if p.Entries > 0 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Push = %v; want context.Canceled", err)
	}
	in, err := to.Info(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if in.Entries != 3 {
		t.Errorf("after the interruption the target has %d entries; want the first batch's 3", in.Entries)
	}
	if len(rep.Results) != 1 || rep.Results[0].Status != store.PushFailed || rep.Results[0].Pushed != 3 {
		t.Errorf("interrupted report = %+v; want one failure after 3 entries", rep.Results)
	}
	rep = mustPush(t, from, to, store.PushOptions{BatchEntries: 3})
	if diff := cmp.Diff(map[string]string{id: "pushed 4"}, results(rep)); diff != "" {
		t.Errorf("resumed push (-want +got):\n%s", diff)
	}
	wantSameSession(t, from, to, id)
}

func TestPushResumesAfterInterruption(t *testing.T) {
	t.Parallel()
	testPushResumes(t, openStore(t), openStore(t))
}

func TestPushConflict(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-4444-7000-8000-000000000004"
	for _, tt := range []struct {
		name string
		// diverge changes the target's copy (or makes it) after the
		// source's session was made.
		diverge func(t *testing.T, from, to *store.Store)
	}{
		{"target appended", func(t *testing.T, from, to *store.Store) {
			mustPush(t, from, to, store.PushOptions{})
			st, err := to.OpenSession(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			newBuilder(t, st).user("t1", "written on the target")
			// The source gains one entry too, so counts alone cannot tell.
			src, err := from.OpenSession(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			b := newBuilder(t, src)
			b.user("s1", "written on the source")
			b.user("s2", "and again")
		}},
		{"another session of the same id, longer", func(t *testing.T, from, to *store.Store) {
			st := mustCreate(t, to, store.CreateOptions{ID: id, Cwd: "/home/me/project", ParentSession: "0198f2a4-0000-7000-8000-000000000001"})
			b := newBuilder(t, st)
			for i := range 8 {
				b.user(fmt.Sprintf("x%d", i), "another session")
			}
		}},
		{"another session of the same id", func(t *testing.T, from, to *store.Store) {
			st := mustCreate(t, to, store.CreateOptions{ID: id, Cwd: "/home/me/project", ParentSession: "0198f2a4-0000-7000-8000-000000000001"})
			newBuilder(t, st).user("u1", "another hello")
		}},
		{"another cwd", func(t *testing.T, from, to *store.Store) {
			mustCreate(t, to, store.CreateOptions{ID: id, Cwd: "/elsewhere"})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			from, to := openStore(t), openStore(t)
			pushSource(t, from, id)
			tt.diverge(t, from, to)
			before, err := to.Info(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			rep := mustPush(t, from, to, store.PushOptions{})
			if len(rep.Results) != 1 || rep.Results[0].Status != store.PushConflict {
				t.Fatalf("Push = %+v; want one conflict", rep.Results)
			}
			if err := rep.Results[0].Err; !errors.Is(err, sessiontree.ErrConflict) || rep.Results[0].Reason == "" {
				t.Errorf("conflict error = %v (reason %q); want one matching ErrConflict, with a reason", err, rep.Results[0].Reason)
			}
			if rep.OK() {
				t.Error("OK() = true with a conflict")
			}
			after, err := to.Info(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("the conflict changed the target (-before +after):\n%s", diff)
			}
		})
	}
}

// A session another writer holds a claim on in the target is left
// alone, reported as claimed in the claim's own words on both engines
// (the write step an engine meets it in is not the push's).
func TestPushLeavesAClaimedSession(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-5555-7000-8000-000000000005"
	onEngines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		from, to := openStore(t), open(t)
		_, b := pushSource(t, from, id)
		mustPush(t, from, to, store.PushOptions{})
		b.user("u9", "more")
		st, err := to.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		c, err := st.(sessiontree.Claimer).Claim(ctx, "agent on the team store", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release(ctx)

		rep := mustPush(t, from, to, store.PushOptions{})
		var claimed *sessiontree.ClaimedError
		if len(rep.Results) != 1 || rep.Results[0].Status != store.PushClaimed || !errors.As(rep.Results[0].Err, &claimed) {
			t.Fatalf("Push = %+v; want the session claimed", rep.Results)
		}
		if got, want := rep.Results[0].Reason, claimed.Error(); got != want || !strings.HasPrefix(got, "session "+id+" is claimed by ") {
			t.Errorf("Reason = %q; want the claim's own %q", got, want)
		}
		if in, err := to.Info(ctx, id); err != nil || in.Entries != 7 {
			t.Errorf("target has %d entries (%v); want 7, untouched", in.Entries, err)
		}
	})
}

func TestPushNamedSessions(t *testing.T) {
	t.Parallel()
	const id1, id2 = "0198f2a4-6666-7000-8000-000000000006", "0198f2a4-7777-7000-8000-000000000007"
	from, to := openStore(t), openStore(t)
	pushSource(t, from, id1)
	pushSource(t, from, id2)
	rep := mustPush(t, from, to, store.PushOptions{Sessions: []string{"0198f2a4-7777"}})
	if diff := cmp.Diff(map[string]string{id2: "pushed 7"}, results(rep)); diff != "" {
		t.Errorf("Push (-want +got):\n%s", diff)
	}
	if _, err := to.Info(context.Background(), id1); !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Info(%s) on the target = %v; want ErrNotFound: it was not named", id1, err)
	}
	_, err := store.Push(context.Background(), from, to, store.PushOptions{Sessions: []string{"ffff"}})
	if !errors.Is(err, sessiontree.ErrNotFound) {
		t.Errorf("Push of an unknown session = %v; want ErrNotFound", err)
	}
}

func TestPushProgress(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-8888-7000-8000-000000000008"
	from, to := openStore(t), openStore(t)
	pushSource(t, from, id)
	var got []store.PushProgress
	mustPush(t, from, to, store.PushOptions{BatchEntries: 5, Progress: func(p store.PushProgress) { got = append(got, p) }})
	want := []store.PushProgress{
		{EntriesTotal: 7, SessionsTotal: 1},
		{Entries: 5, EntriesTotal: 7, SessionsTotal: 1},
		{Entries: 7, EntriesTotal: 7, SessionsTotal: 1},
		{Entries: 7, EntriesTotal: 7, Sessions: 1, SessionsTotal: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

// TestPushAcrossEngines pushes between SQLite and PostgreSQL, both ways:
// new and incremental sessions, a rerun, an interrupted push resumed,
// and a conflict, as between two SQLite stores.
func TestPushAcrossEngines(t *testing.T) {
	t.Parallel()
	for _, pair := range []struct {
		name     string
		from, to opener
	}{
		{"sqlite-to-postgres", openStore, openPostgresStore},
		{"postgres-to-sqlite", openPostgresStore, openStore},
	} {
		t.Run(pair.name, func(t *testing.T) {
			t.Run("incremental", func(t *testing.T) { testPushIncremental(t, pair.from(t), pair.to(t)) })
			t.Run("resumes", func(t *testing.T) { testPushResumes(t, pair.from(t), pair.to(t)) })
			t.Run("conflict", func(t *testing.T) { testPushConflict(t, pair.from(t), pair.to(t)) })
		})
	}
}

// testPushConflict writes to both copies of a session after a push: the
// next push reports a conflict and leaves the target as it was.
func testPushConflict(t *testing.T, from, to *store.Store) {
	const id = "0198f2a4-9999-7000-8000-000000000009"
	ctx := context.Background()
	_, b := pushSource(t, from, id)
	mustPush(t, from, to, store.PushOptions{})
	b.user("s1", "written on the source")
	st, err := to.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	newBuilder(t, st).user("t1", "written on the target")
	rep := mustPush(t, from, to, store.PushOptions{})
	if len(rep.Results) != 1 || rep.Results[0].Status != store.PushConflict {
		t.Fatalf("Push = %+v; want one conflict", rep.Results)
	}
	if got := ids(logOf(t, st)); got[len(got)-1] != "t1" || len(got) != 8 {
		t.Errorf("target log = %v; want the 7 pushed entries and t1", got)
	}
}

// A target whose write lock another process holds past the busy timeout
// fails the session's push, saying so; it is not a claim on the session,
// which PushClaimed reports.
func TestPushLockedIsNotClaimed(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-5555-7000-8000-000000000015"
	ctx := context.Background()
	from := openStore(t)
	pushSource(t, from, id)
	path := filepath.Join(t.TempDir(), "target.db")
	holder := openStoreAt(t, path)
	to, err := store.Open(ctx, path, store.Options{Engine: engine.Options{BusyTimeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer to.Close()
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- holder.DB().Update(ctx, func(*engine.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	rep, err := store.Push(ctx, from, to, store.PushOptions{})
	close(release)
	if herr := <-done; herr != nil {
		t.Fatal(herr)
	}
	if err != nil {
		t.Fatal(err)
	}
	var claimed *sessiontree.ClaimedError
	if len(rep.Results) != 1 || rep.Results[0].Status != store.PushFailed ||
		!errors.Is(rep.Results[0].Err, sessiontree.ErrLocked) || errors.As(rep.Results[0].Err, &claimed) {
		t.Fatalf("Push = %+v; want the session failed on the held lock", rep.Results)
	}
}

// A session named twice (by its id and a prefix, or the same prefix
// twice) is pushed once.
func TestPushSessionNamedTwice(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-6666-7000-8000-000000000016"
	from, to := openStore(t), openStore(t)
	_, b := pushSource(t, from, id)
	for i, tt := range []struct {
		names []string
		want  string
	}{
		{[]string{id, "0198f2a4-6666"}, "pushed 7"},
		{[]string{"0198f2a4-6666", "0198f2a4-6666"}, "pushed 1"},
	} {
		rep := mustPush(t, from, to, store.PushOptions{Sessions: tt.names})
		if len(rep.Results) != 1 || !rep.OK() {
			t.Errorf("Push(%q) = %+v; want one result, %s", tt.names, rep.Results, tt.want)
		} else if got := results(rep)[id]; got != tt.want {
			t.Errorf("Push(%q) = %s; want %s", tt.names, got, tt.want)
		}
		b.user(fmt.Sprintf("more%d", i), "more")
	}
	mustPush(t, from, to, store.PushOptions{})
	wantSameSession(t, from, to, id)
}

// Two pushes of one session into one target at once agree: the one that
// finds the target written to by the other meanwhile sees that the
// target's entries are the source's and goes on from there, as when the
// session was created, or grown, under it. Neither reports a conflict,
// on a target of either engine.
func TestPushRacesAnotherPush(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-6666-7000-8000-000000000017"
	for _, tt := range []struct {
		name string
		// at is the progress at which the other push runs, whole.
		at   int64
		want string
	}{
		{"before the session is created", 0, "up-to-date 0"},
		{"after the first batch", 3, "pushed 3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			onEngines(t, func(t *testing.T, open opener) {
				from, to := openStore(t), open(t)
				pushSource(t, from, id)
				var other store.PushReport
				rep := mustPush(t, from, to, store.PushOptions{BatchEntries: 3, Progress: func(p store.PushProgress) {
					if p.Entries == tt.at && other.Results == nil {
						other = mustPush(t, from, to, store.PushOptions{})
					}
				}})
				if diff := cmp.Diff(map[string]string{id: fmt.Sprintf("pushed %d", 7-tt.at)}, results(other)); diff != "" {
					t.Errorf("the other push (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(map[string]string{id: tt.want}, results(rep)); diff != "" {
					t.Errorf("the push raced (-want +got):\n%s", diff)
				}
				wantSameSession(t, from, to, id)
			})
		})
	}
}

// A target written to by its own writer during a push is a conflict
// still, found when the push plans again: the batches before stay, the
// target's entry stays, nothing is interleaved.
func TestPushTargetWrittenDuringPush(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-6666-7000-8000-000000000018"
	from, to := openStore(t), openStore(t)
	pushSource(t, from, id)
	rep := mustPush(t, from, to, store.PushOptions{BatchEntries: 3, Progress: func(p store.PushProgress) {
		if p.Entries == 3 && p.Sessions == 0 {
			st, err := to.OpenSession(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			newBuilder(t, st).user("t1", "written on the target")
		}
	}})
	if diff := cmp.Diff(map[string]string{id: "conflict 3"}, results(rep)); diff != "" {
		t.Errorf("Push (-want +got):\n%s", diff)
	}
	st, err := to.OpenSession(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := ids(logOf(t, st)); len(got) != 4 || got[3] != "t1" {
		t.Errorf("target log = %v; want the 3 pushed entries and t1", got)
	}
}

// A batch holds no more than BatchBytes of entries' JSON, and the entry
// that reaches it: a run of large entries (tool outputs) is not pushed,
// nor read, a BatchEntries count of them at a time.
func TestPushBatchBytes(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-6666-7000-8000-000000000019"
	from, to := openStore(t), openStore(t)
	st := mustCreate(t, from, store.CreateOptions{ID: id, Cwd: "/p"})
	b := newBuilder(t, st)
	big := strings.Repeat("x", 10_000)
	for i := range 10 {
		b.user(fmt.Sprintf("u%d", i), big)
	}
	var steps []int64
	var last int64
	mustPush(t, from, to, store.PushOptions{BatchBytes: 25_000, Progress: func(p store.PushProgress) {
		if p.Entries > last {
			steps, last = append(steps, p.Entries-last), p.Entries
		}
	}})
	if diff := cmp.Diff([]int64{3, 3, 3, 1}, steps); diff != "" {
		t.Errorf("entries per batch (-want +got):\n%s", diff)
	}
	wantSameSession(t, from, to, id)
}

// listHook is a database whose first ListSessions calls after, once the
// page is read: a write between two pages of a listing.
type listHook struct {
	sessiontree.Database
	after func()
}

func (d *listHook) View(ctx context.Context, fn func(sessiontree.DatabaseTx) error) error {
	return d.Database.View(ctx, func(tx sessiontree.DatabaseTx) error { return fn(listHookTx{tx, d}) })
}

type listHookTx struct {
	sessiontree.DatabaseTx
	d *listHook
}

func (tx listHookTx) ListSessions(q sessiontree.ListQuery) ([]sessiontree.ListedSession, error) {
	rows, err := tx.DatabaseTx.ListSessions(q)
	if after := tx.d.after; after != nil && err == nil {
		tx.d.after = nil
		after()
	}
	return rows, err
}

// A push of every session pushes those written to while it lists them:
// the oldest session, appended to after the first page of the list was
// read, moves before that page, and was pushed by no page.
func TestPushListsEverySession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, to := openStore(t), openStore(t)
	// Pages of 3 sessions, not of MaxListLimit: the same two pages for
	// 5 sessions that 1,002 took, each one pushed.
	const page = 3
	n := page + 2
	err := src.Database().Update(ctx, func(tx sessiontree.DatabaseTx) error {
		for i := range n {
			meta := sessiontree.SessionMeta{ID: fmt.Sprintf("0198f2a4-0000-7000-8000-%012d", i), Version: 3, CreatedAt: "2026-03-01T09:00:00.000Z", Cwd: "/p"}
			if _, err := tx.NewSession(meta, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	oldest := "0198f2a4-0000-7000-8000-000000000000"
	from := store.New(&listHook{Database: src.Database(), after: func() {
		st, err := src.OpenSession(ctx, oldest)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		newBuilder(t, st).user("u1", "written during the listing")
	}})
	store.SetListPage(from, page)
	rep := mustPush(t, from, to, store.PushOptions{})
	if got := len(rep.Results); got != n {
		t.Errorf("Push has %d results; want %d", got, n)
	}
	if _, err := to.Info(ctx, oldest); err != nil {
		t.Errorf("Info(%s) on the target: %v; want the session pushed", oldest, err)
	}
}

// Two pushes that take turns, each appending a batch while the other
// plans again, both go on: the target grows each time, so neither gives
// up as on a target that does not move.
func TestPushTakesTurns(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-6666-7000-8000-000000000020"
	from, to := openStore(t), openStore(t)
	pushSource(t, from, id)
	turns := 0
	rep := mustPush(t, from, to, store.PushOptions{BatchEntries: 1, Progress: func(p store.PushProgress) {
		if p.Sessions > 0 {
			return
		}
		// The other push appends one batch, then is interrupted.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		other, _ := store.Push(ctx, from, to, store.PushOptions{BatchEntries: 1, Progress: func(p store.PushProgress) {
			if p.Entries > 0 {
				cancel()
			}
		}})
		if len(other.Results) == 1 && other.Results[0].Pushed == 1 {
			turns++
		}
	}})
	if len(rep.Results) != 1 || rep.Results[0].Status != store.PushPushed {
		t.Errorf("Push = %+v; want the session pushed", rep.Results)
	}
	if turns < 4 {
		t.Errorf("the other push took %d turns; want 4 or more, more than pushReplans", turns)
	}
	wantSameSession(t, from, to, id)
}

// A target whose session grew since the last push while the source's did
// not holds every entry of the source: the session is up to date, not a
// conflict (written to on one side only), in either direction, and
// the target is left as it is.
func TestPushTargetAhead(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-6666-7000-8000-000000000021"
	ctx := context.Background()
	laptop, team := openStore(t), openStore(t)
	pushSource(t, laptop, id)
	mustPush(t, laptop, team, store.PushOptions{})
	st, err := team.OpenSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := newBuilder(t, st)
	b.assistant("t1", "continued on the team's database")
	b.user("t2", "and again")
	before, err := team.Info(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rep := mustPush(t, laptop, team, store.PushOptions{})
	if diff := cmp.Diff(map[string]string{id: "up-to-date 0"}, results(rep)); diff != "" {
		t.Errorf("push to the target ahead (-want +got):\n%s", diff)
	}
	if after, err := team.Info(ctx, id); err != nil || !cmp.Equal(before, after) {
		t.Errorf("the push changed the target: %+v, %v; want %+v", after, err, before)
	}
	rep = mustPush(t, team, laptop, store.PushOptions{})
	if diff := cmp.Diff(map[string]string{id: "pushed 2"}, results(rep)); diff != "" {
		t.Errorf("pull back (-want +got):\n%s", diff)
	}
	wantSameSession(t, team, laptop, id)
}

// What a push says names the copy as PushOptions.Verb does, "push"
// when it is empty: the step of its errors (a session the source lacks,
// an interruption) and the reason of a session deleted at the source
// while it ran. The command's pull gives "pull", and none of its
// messages may say push.
func TestPushSaysItsVerb(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-6666-7000-8000-000000000022"
	ctx := context.Background()
	from, to := openStore(t), openStore(t)
	pushSource(t, from, id)
	for _, tt := range []struct{ verb, word string }{{"", "push"}, {"pull", "pull"}} {
		verb, word := tt.verb, tt.word
		_, err := store.Push(ctx, from, to, store.PushOptions{Verb: verb, Sessions: []string{"ffff"}})
		if want := word + ": session ffff not found"; err == nil || err.Error() != want || !errors.Is(err, sessiontree.ErrNotFound) {
			t.Errorf("Push(Verb %q) of a session the source lacks = %v; want %q, matching ErrNotFound", verb, err, want)
		}
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = store.Push(cancelled, from, to, store.PushOptions{Verb: verb})
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), word+": ") {
			t.Errorf("interrupted Push(Verb %q) = %v; want context.Canceled, saying %q first", verb, err, word+":")
		}
	}
	rep := mustPush(t, from, to, store.PushOptions{Verb: "pull", Progress: onceAt(0, func() {
		if _, err := from.Delete(ctx, id); err != nil {
			t.Error(err)
		}
	})})
	if len(rep.Results) != 1 || rep.Results[0].Status != store.PushSkipped ||
		rep.Results[0].Reason != "deleted at the source during the pull" || store.PushDeletedReason("pull") != rep.Results[0].Reason {
		t.Errorf("a pull of a session deleted during it = %+v; want it skipped, deleted at the source during the pull", rep.Results)
	}
}

// A push that finds the target's id taken when it creates the session
// reports the conflict in the same words on both engines: the root's
// SessionExistsError, as it is, with no step of one engine's before it.
// The target here has another writer make the session (with the
// source's header, so that each plan finds it a prefix) before every
// transaction of the push when it lacks it, and delete it when it has
// it: the push plans again after each, pushReplans times, and then
// reports the create's conflict.
func TestPushCreateConflictReadsAlike(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-6666-7000-8000-000000000023"
	onEngines(t, func(t *testing.T, open opener) {
		from, to := openStore(t), open(t)
		src, _ := pushSource(t, from, id)
		into := store.New(&churnTarget{Database: to.Database(), t: t, s: to, meta: metaOf(t, src)})
		rep := mustPush(t, from, into, store.PushOptions{})
		want := "session " + id + " already exists"
		var exists *sessiontree.SessionExistsError
		if len(rep.Results) != 1 || rep.Results[0].Status != store.PushConflict || rep.Results[0].Reason != want ||
			!errors.As(rep.Results[0].Err, &exists) || exists.ID != id {
			t.Errorf("Push = %+v; want a conflict, %q, a *SessionExistsError", rep.Results, want)
		}
	})
}

// churnTarget is a database on which, before each write transaction,
// another writer makes session meta.ID when it lacks it, with meta's
// header, and deletes it when it has it.
type churnTarget struct {
	sessiontree.Database
	t    testing.TB
	s    *store.Store // the same database, unhooked
	meta sessiontree.SessionMeta
}

func (d *churnTarget) Update(ctx context.Context, fn func(sessiontree.DatabaseTx) error) error {
	_, err := d.s.Info(ctx, d.meta.ID)
	switch {
	case errors.Is(err, sessiontree.ErrNotFound):
		err = d.Database.Update(ctx, func(tx sessiontree.DatabaseTx) error {
			_, err := tx.NewSession(d.meta, nil)
			return err
		})
	case err == nil:
		_, err = d.s.Delete(ctx, d.meta.ID)
	}
	if err != nil {
		d.t.Errorf("the other writer: %v", err)
	}
	return d.Database.Update(ctx, fn)
}
