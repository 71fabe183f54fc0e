package main

// The push workload: issue 15's `push` of a session from a laptop's
// SQLite store to the team's PostgreSQL store (store.Push, what
// `sessiontree push --to URL` runs), and for reference to a new SQLite
// store. Its target is 100,000 entries in under 10 s.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sessiontree/sessiontree/store"
)

// pushLimitNs is issue 15's bound on a push of pushTargetEntries.
const (
	pushLimitNs       = 10e9
	pushTargetEntries = 100_000
)

// pushSource is the SQLite store a push copies from: the dataset's
// entries under a session id of their own, so that the postgres target
// never meets the session the postgres backend loaded for the dataset.
// It is made once, by the first case set up, and shared.
type pushSource struct {
	path string
	ds   *dataset
	id   string // "" until made
}

// open opens the source store, making it first if it is not made yet, and
// returns it with the session's id.
func (src *pushSource) open(ctx context.Context) (*store.Store, error) {
	s, err := store.Open(ctx, src.path, store.Options{})
	if err != nil || src.id != "" {
		return s, err
	}
	st, err := s.Create(ctx, store.CreateOptions{Cwd: src.ds.Meta.Cwd})
	if err == nil {
		err = st.AppendBatch(ctx, src.ds.Entries)
		src.id = st.ID()
		st.Close()
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("push source: %w", err)
	}
	return s, nil
}

// pushCases time store.Push of the dataset's session to the PostgreSQL
// server's store, which lacks it (postgres; with -pg; deleted again after
// each run), and to a new SQLite store (store).
func pushCases(r *runner, ds *dataset) []benchCase {
	src := &pushSource{path: filepath.Join(r.dir, backendStore, "push-source.db"), ds: ds}
	mk := func(backend string, open func(ctx context.Context) (*store.Store, error), done func(ctx context.Context, to *store.Store, id string) error) benchCase {
		return benchCase{backend: backend, setup: func(ctx context.Context) (*prepared, error) {
			if open == nil {
				return nil, errUnsupported
			}
			from, err := src.open(ctx)
			if err != nil {
				return nil, err
			}
			var to *store.Store
			p := &prepared{maxIters: 1, rows: len(ds.Entries), bytes: ds.PayloadBytes, close: from.Close,
				note: "store.Push of one session, " + fmt.Sprint(store.DefaultPushBatch) + " entries a transaction"}
			p.before = func(ctx context.Context) (err error) {
				to, err = open(ctx)
				return err
			}
			p.op = func(ctx context.Context) error { return pushAll(ctx, from, to, src.id, len(ds.Entries)) }
			p.after = func(ctx context.Context) error { return done(ctx, to, src.id) }
			return p, nil
		}}
	}
	var pgOpen func(ctx context.Context) (*store.Store, error)
	if r.pgURL != "" {
		pgOpen = func(ctx context.Context) (*store.Store, error) { return store.OpenURL(ctx, r.pgURL, store.Options{}) }
	}
	pgDone := func(ctx context.Context, to *store.Store, id string) error {
		_, err := to.Delete(ctx, id)
		return joinClose(err, to)
	}
	target := filepath.Join(r.dir, backendStore, "push-target.db")
	sqliteOpen := func(ctx context.Context) (*store.Store, error) {
		if err := removeDB(target); err != nil {
			return nil, err
		}
		return store.Open(ctx, target, store.Options{})
	}
	sqliteDone := func(ctx context.Context, to *store.Store, _ string) error {
		err := joinClose(nil, to)
		removeDB(target)
		return err
	}
	return []benchCase{mk(backendPostgres, pgOpen, pgDone), mk(backendStore, sqliteOpen, sqliteDone)}
}

// joinClose closes s and returns err, or the close's error when err is nil.
func joinClose(err error, s *store.Store) error {
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// pushAll pushes session id from from to to and checks that all of its
// want entries were appended.
func pushAll(ctx context.Context, from, to *store.Store, id string, want int) error {
	rep, err := store.Push(ctx, from, to, store.PushOptions{Sessions: []string{id}})
	if err != nil {
		return err
	}
	if len(rep.Results) != 1 {
		return fmt.Errorf("push: %d sessions pushed, want 1", len(rep.Results))
	}
	if res := rep.Results[0]; res.Status != store.PushPushed || res.Pushed != int64(want) {
		return errors.Join(fmt.Errorf("push: %s, %d entries, want %s, %d", res.Status, res.Pushed, store.PushPushed, want), res.Err)
	}
	return nil
}

// pushTarget checks issue 15's push target on the postgres row, the
// SQLite store's beside it.
func (rep *Report) pushTarget(add func(string, string, string), notRun func(string, string)) {
	const target = "postgres: push of 100,000 entries (SQLite store to PostgreSQL) < 10 s"
	n, at := rep.atSize("push", string(ShapeCompacted), pushTargetEntries)
	r := rep.find("push", string(ShapeCompacted), n, backendPostgres)
	if r == nil {
		notRun(target, "postgres push not measured (-pg URL or -pg auto)")
		return
	}
	m := fmt.Sprintf("%s (%.0f entries/s)", fmtDuration(r.MedianNs), float64(r.Rows)/(r.MedianNs/1e9))
	if r.MedianNs > pushLimitNs {
		m += fmt.Sprintf(", %s the bound", fmtRatio(r.MedianNs/pushLimitNs))
	}
	if s := rep.find("push", string(ShapeCompacted), n, backendStore); s != nil {
		m += "; SQLite to SQLite " + fmtDuration(s.MedianNs)
	}
	add(target, m+at, verdict(r.MedianNs < pushLimitNs))
}
