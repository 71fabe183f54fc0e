package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
)

// enginePairs runs test once per pair of engines, source then target, as
// parallel subtests: each engine is the source of one and the target of
// the other.
func enginePairs(t *testing.T, test func(t *testing.T, from, to *store.Store)) {
	t.Helper()
	for _, p := range []struct {
		name     string
		from, to opener
	}{
		{"sqlite to postgres", openStore, openPostgresStore},
		{"postgres to sqlite", openPostgresStore, openStore},
	} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			test(t, p.from(t), p.to(t))
		})
	}
}

// A session deleted at the source while a push runs, whenever the delete
// falls (after the listing, after the plan, between two batches), no
// longer exists to be pushed: it is skipped, saying so, and the push of
// the others goes on and is OK. Nothing of it is made on the target that
// was not there: what batches went before stay, a prefix of the source's.
func TestPushSourceDeletedDuringPush(t *testing.T) {
	t.Parallel()
	const kept, gone = "0198f2a4-7777-7000-8000-000000000001", "0198f2a4-7777-7000-8000-000000000002"
	for _, tt := range []struct {
		name string
		// hook deletes gone: listed after the listing, read before
		// the copy's first read of it, else at progress entries.
		listed, read bool
		entries      int64
		// target is how many entries of gone the target holds after.
		target int64
	}{
		{"after the listing", true, false, 0, -1},
		{"after the plan", false, false, 0, -1},
		{"before the copy reads it", false, true, 0, -1},
		{"between two batches", false, false, 3, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			enginePairs(t, func(t *testing.T, src, to *store.Store) {
				ctx := context.Background()
				// gone is written last, so it lists first and is
				// pushed first.
				pushSource(t, src, kept)
				pushSource(t, src, gone)
				del := func() {
					if n, err := src.Delete(ctx, gone); n != 1 || err != nil {
						t.Errorf("Delete(%s) = %d, %v; want 1, nil", gone, n, err)
					}
				}
				from := src
				opts := store.PushOptions{BatchEntries: 3}
				switch {
				case tt.listed:
					from = store.New(&listHook{Database: src.Database(), after: del})
				case tt.read:
					from = store.New(&logHook{Database: src.Database(), before: del})
				default:
					opts.Progress = onceAt(tt.entries, del)
				}
				rep := mustPush(t, from, to, opts)
				want := map[string]string{kept: "pushed 7", gone: "skipped 0"}
				if tt.entries > 0 {
					want[gone] = "skipped 3"
				}
				if diff := cmp.Diff(want, results(rep)); diff != "" {
					t.Errorf("Push (-want +got):\n%s", diff)
				}
				if !rep.OK() {
					t.Errorf("OK() = false for %+v", rep.Results)
				}
				for _, r := range rep.Results {
					if want := store.PushDeletedReason(""); r.Session == gone && (r.Reason != want || !errors.Is(r.Err, sessiontree.ErrNotFound)) {
						t.Errorf("Reason, Err = %q, %v; want %q and an error matching ErrNotFound", r.Reason, r.Err, want)
					}
				}
				wantSameSession(t, src, to, kept)
				in, err := to.Info(ctx, gone)
				switch {
				case tt.target < 0 && !errorsIsNotFound(err):
					t.Errorf("target Info(%s) = %+v, %v; want ErrNotFound: nothing made", gone, in, err)
				case tt.target >= 0 && (err != nil || in.Entries != tt.target):
					t.Errorf("target Info(%s) = %+v, %v; want %d entries", gone, in, err, tt.target)
				}
			})
		})
	}
}

// onceAt is a push's progress callback that calls fn once, when the
// first session's copy has appended entries.
func onceAt(entries int64, fn func()) func(store.PushProgress) {
	done := false
	return func(p store.PushProgress) {
		if !done && p.Entries == entries && p.Sessions == 0 {
			done = true
			fn()
		}
	}
}

func errorsIsNotFound(err error) bool { return err != nil && errors.Is(err, sessiontree.ErrNotFound) }

// logHook is a database whose sessions' first Log call, of any of them,
// calls before (the first times calls, when times is more than 1): a
// write after a session was opened, before it is read.
type logHook struct {
	sessiontree.Database
	before func()
	times  int
}

func (d *logHook) OpenSession(ctx context.Context, id string) (sessiontree.DatabaseSession, error) {
	st, err := d.Database.OpenSession(ctx, id)
	if err != nil {
		return nil, err
	}
	return logHookSession{st, d}, nil
}

type logHookSession struct {
	sessiontree.DatabaseSession
	d *logHook
}

func (s logHookSession) Log(ctx context.Context, after int64, limit int) ([]sessiontree.Entry, error) {
	if before := s.d.before; before != nil {
		if s.d.times--; s.d.times <= 0 {
			s.d.before = nil
		}
		before()
	}
	return s.DatabaseSession.Log(ctx, after, limit)
}

// A session deleted on the target while a push copies it into it (while
// the push compares it with the source's, before the first batch or
// between two) is made again from the source's, as a
// push started after the delete would: the push does not fail, and the
// target ends with the source's session, nothing of the deleted one.
func TestPushTargetDeletedDuringPush(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-7777-7000-8000-000000000003"
	for _, tt := range []struct {
		name string
		// entries is the progress at which the target's copy is deleted;
		// -1 is before the push's first read of it.
		entries int64
		// pushed is how many entries the push appended in all.
		pushed int
	}{
		{"while the push compares it", -1, 8},
		{"before the first batch", 0, 8},
		{"between two batches", 3, 11},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			enginePairs(t, func(t *testing.T, from, to *store.Store) {
				ctx := context.Background()
				_, b := pushSource(t, from, id)
				// The target has the session's first entry already:
				// the push appends 7 to its copy, which is deleted
				// under it.
				early := store.New(&firstEntries{from.Database(), 1})
				mustPush(t, early, to, store.PushOptions{})
				b.user("u5", "after the first push")
				del := func() {
					if n, err := to.DeleteWith(ctx, sessiontree.DeleteOptions{Force: true}, id); n != 1 || err != nil {
						t.Errorf("Delete(%s) on the target = %d, %v; want 1, nil", id, n, err)
					}
				}
				into := to
				opts := store.PushOptions{BatchEntries: 3, Progress: onceAt(tt.entries, del)}
				if tt.entries < 0 {
					into = store.New(&logHook{Database: to.Database(), before: del})
				}
				rep := mustPush(t, from, into, opts)
				if diff := cmp.Diff(map[string]string{id: fmt.Sprintf("pushed %d", tt.pushed)}, results(rep)); diff != "" {
					t.Errorf("Push (-want +got):\n%s", diff)
				}
				wantSameSession(t, from, to, id)
			})
		})
	}
}

// firstEntries is a database whose sessions show their first n entries
// alone: a source as it was when a session was shorter.
type firstEntries struct {
	sessiontree.Database
	n int64
}

func (d *firstEntries) View(ctx context.Context, fn func(sessiontree.DatabaseTx) error) error {
	return d.Database.View(ctx, func(tx sessiontree.DatabaseTx) error { return fn(firstEntriesTx{tx, d.n}) })
}

type firstEntriesTx struct {
	sessiontree.DatabaseTx
	n int64
}

func (tx firstEntriesTx) SessionInfo(id string) (sessiontree.SessionInfo, error) {
	in, err := tx.DatabaseTx.SessionInfo(id)
	in.Entries = min(in.Entries, tx.n)
	return in, err
}

// A session appended to at the source while a push copies it is copied
// as it was when the push planned it: the target holds a prefix of the
// source's log, whole entries in order, and the next push appends the
// rest.
func TestPushSourceAppendedDuringPush(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-7777-7000-8000-000000000004"
	enginePairs(t, func(t *testing.T, from, to *store.Store) {
		ctx := context.Background()
		_, b := pushSource(t, from, id)
		rep := mustPush(t, from, to, store.PushOptions{BatchEntries: 3, Progress: onceAt(3, func() {
			b.assistant("a9", "appended during the push")
			b.user("u9", "and again")
		})})
		if diff := cmp.Diff(map[string]string{id: "pushed 7"}, results(rep)); diff != "" {
			t.Errorf("Push (-want +got):\n%s", diff)
		}
		src, err := from.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		dst, err := to.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Close()
		if got, want := ids(logOf(t, dst)), ids(logOf(t, src))[:7]; !cmp.Equal(got, want) {
			t.Errorf("target log = %v; want the source's first 7, %v", got, want)
		}
		rep = mustPush(t, from, to, store.PushOptions{})
		if diff := cmp.Diff(map[string]string{id: "pushed 2"}, results(rep)); diff != "" {
			t.Errorf("next Push (-want +got):\n%s", diff)
		}
		wantSameSession(t, from, to, id)
	})
}

// A session deleted at the source while a push copies it, and made
// again there with the same id, is another session: the push never
// copies entries of the one after those of the other. When the target
// holds nothing of the first yet (the delete falls after the plan, or
// before the copy's first read), the second is pushed, as a push begun
// after it was made would push it. When batches of the first went in,
// the second is compared with them as any session is: one that holds
// them (made again from the same log, and grown) is pushed on; another
// is a conflict, saying it was made again, and the target keeps the
// first's entries it had, nothing of the second's.
func TestPushSourceRemadeDuringPush(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-7777-7000-8000-000000000005"
	for _, tt := range []struct {
		name string
		// read remakes the session before the copy's first read of it,
		// else at progress entries.
		read    bool
		entries int64
		// same remakes it with the first's header and log and one
		// entry more; else it is another session, of two entries.
		same bool
		// want is the push's result; kept how many of the first's
		// entries the target holds after a conflict.
		want string
		kept int
	}{
		{"after the plan", false, 0, false, "pushed 2", 0},
		{"before the copy reads it", true, 0, false, "pushed 2", 0},
		{"between two batches", false, 3, false, "conflict 3", 3},
		{"between two batches, from the same log", false, 3, true, "pushed 8", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && (tt.read || tt.same) {
				t.Skip("two PostgreSQL databases, some 3 s: -short pushes the other session before and after a batch")
			}
			t.Parallel()
			enginePairs(t, func(t *testing.T, src, to *store.Store) {
				ctx := context.Background()
				first, _ := pushSource(t, src, id)
				meta, firstLog := metaOf(t, first), logOf(t, first)
				info, err := src.Info(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				remake := func() {
					if n, err := src.Delete(ctx, id); n != 1 || err != nil {
						t.Errorf("Delete(%s) = %d, %v; want 1, nil", id, n, err)
					}
					if !tt.same {
						b := newBuilder(t, mustCreate(t, src, store.CreateOptions{ID: id, Cwd: "/home/me/other"}))
						b.user("v1", "another session")
						b.assistant("w1", "with the same id")
						return
					}
					err := src.Database().Update(ctx, func(tx sessiontree.DatabaseTx) error {
						st, err := tx.NewSession(meta, info.Metadata)
						if err != nil {
							return err
						}
						return tx.AppendEntries(st, firstLog)
					})
					if err != nil {
						t.Fatal(err)
					}
					again, err := src.OpenSession(ctx, id)
					if err != nil {
						t.Fatal(err)
					}
					defer again.Close()
					newBuilder(t, again).user("u9", "grown after it was made again")
				}
				from := src
				opts := store.PushOptions{BatchEntries: 3}
				if tt.read {
					from = store.New(&logHook{Database: src.Database(), before: remake})
				} else {
					opts.Progress = onceAt(tt.entries, remake)
				}
				rep := mustPush(t, from, to, opts)
				if diff := cmp.Diff(map[string]string{id: tt.want}, results(rep)); diff != "" {
					t.Errorf("Push (-want +got):\n%s", diff)
				}
				if tt.kept == 0 {
					wantSameSession(t, src, to, id)
					return
				}
				r := rep.Results[0]
				if !errors.Is(r.Err, sessiontree.ErrConflict) || !strings.Contains(r.Reason, store.PushRemadeReason) {
					t.Errorf("Reason, Err = %q, %v; want it to say %q, and an error matching ErrConflict", r.Reason, r.Err, store.PushRemadeReason)
				}
				dst, err := to.OpenSession(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				defer dst.Close()
				if diff := cmp.Diff(raws(firstLog[:tt.kept]), raws(logOf(t, dst))); diff != "" {
					t.Errorf("target log (-the first session's first %d +target):\n%s", tt.kept, diff)
				}
				if got := metaOf(t, dst); got != meta {
					t.Errorf("target Meta = %+v; want the first session's %+v", got, meta)
				}
			})
		})
	}
}

// A session deleted at the source and made again there with its id
// each time the push reads it is planned again as it is now, up to
// pushReplans times: made again three times, the push copies the
// third. Made again a fourth time, the push gives up on it, and says
// why as a conflict does: PushRemadeReason, an error matching
// ErrConflict, nothing made on the target; not a failure without a
// cause.
func TestPushSourceRemadeAgainAndAgain(t *testing.T) {
	t.Parallel()
	const id = "0198f2a4-7777-7000-8000-000000000006"
	for _, tt := range []struct {
		times int
		want  string
	}{
		{3, "pushed 2"},
		{4, "conflict 0"},
	} {
		t.Run(fmt.Sprint(tt.times), func(t *testing.T) {
			t.Parallel()
			enginePairs(t, func(t *testing.T, src, to *store.Store) {
				ctx := context.Background()
				pushSource(t, src, id)
				from := store.New(&logHook{Database: src.Database(), times: tt.times, before: func() {
					if n, err := src.Delete(ctx, id); n != 1 || err != nil {
						t.Errorf("Delete(%s) = %d, %v; want 1, nil", id, n, err)
					}
					b := newBuilder(t, mustCreate(t, src, store.CreateOptions{ID: id, Cwd: "/home/me/other"}))
					b.user("v1", "another session")
					b.assistant("w1", "with the same id")
				}})
				rep := mustPush(t, from, to, store.PushOptions{})
				if diff := cmp.Diff(map[string]string{id: tt.want}, results(rep)); diff != "" {
					t.Fatalf("Push (-want +got):\n%s", diff)
				}
				if r := rep.Results[0]; r.Status == store.PushPushed {
					wantSameSession(t, src, to, id)
					return
				} else if !errors.Is(r.Err, sessiontree.ErrConflict) || !strings.HasPrefix(r.Reason, store.PushRemadeReason) {
					t.Errorf("Reason, Err = %q, %v; want it to begin %q, and an error matching ErrConflict", r.Reason, r.Err, store.PushRemadeReason)
				}
				if in, err := to.Info(ctx, id); !errorsIsNotFound(err) {
					t.Errorf("target Info(%s) = %+v, %v; want ErrNotFound: nothing made", id, in, err)
				}
			})
		})
	}
}
