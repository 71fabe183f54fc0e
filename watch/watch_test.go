package watch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/store"
	"github.com/sessiontree/sessiontree/watch"
)

// TestWatchFollowsFiles: what is there is imported first; then appended
// lines, a new file and a file in a new subfolder come in as they are
// written, each one searchable once the watcher says it has caught up,
// while another store on the same database writes too; the summary says
// what was done.
func TestWatchFollowsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t)
	a := newSessionFile(t, filepath.Join(dir, "--app--", "a.jsonl"), "aaaa-session")
	a.add(3)
	w := startWatch(t, s, []string{dir}, watch.Options{})
	w.caughtUp(a.id, 3)

	other, err := store.Open(context.Background(), s.Path(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for i := range 5 {
		a.add(1)
		w.caughtUp(a.id, 4+i)
		res, err := s.Search(context.Background(), `"message `+strconv.Itoa(4+i)+` of aaaa-session"`, store.SearchOptions{})
		if err != nil || len(res.Hits) != 1 {
			t.Fatalf("Search for message %d = %+v, %v; want one hit", 4+i, res.Hits, err)
		}
		// Another writer gets the lock between the watcher's imports.
		if _, err := other.Create(context.Background(), store.CreateOptions{ID: "other-" + strconv.Itoa(i)}); err != nil {
			t.Fatalf("another store's Create while watching: %v", err)
		}
	}
	b := newSessionFile(t, filepath.Join(dir, "--app--", "b.jsonl"), "bbbb-session")
	b.add(2)
	w.caughtUp(b.id, 2)
	c := newSessionFile(t, filepath.Join(dir, "--new--", "deeper", "c.jsonl"), "cccc-session")
	c.add(1)
	w.caughtUp(c.id, 1)
	c.add(2)
	w.caughtUp(c.id, 3)

	sum := w.stop()
	want := watch.Summary{Followed: 3, Files: 3, NewSessions: 3, Entries: 8 + 2 + 3, Problems: 0}
	sum.Bytes, sum.Duration = 0, 0
	if sum != want {
		t.Errorf("Summary = %+v; want %+v", sum, want)
	}
}

// TestWatchTornLine: a line seen half written is left for later and not
// reported while the file is live; once finished it comes in. A torn
// line left alone past the settle time is reported, once.
func TestWatchTornLine(t *testing.T) {
	t.Parallel()
	const settle = time.Second
	_, _, a, w := watching(t, 1, watch.Options{Settle: settle})

	for i := range 3 {
		line := a.line("a long line written in two pieces") + "\n"
		a.write(os.O_WRONLY|os.O_APPEND, line[:len(line)/2])
		w.waitFor("the watcher to see the torn line", func(e watch.Event) bool {
			return e.Kind == watch.Unsettled && e.Result.Torn != nil && e.Path == a.path
		})
		seen := time.Now()
		a.write(os.O_WRONLY|os.O_APPEND, line[len(line)/2:])
		finished := time.Since(seen)
		w.caughtUp(a.id, 2+i)
		// A line finished well within the settle time is not a problem
		// (a test held up longer than that may see it reported, rightly).
		if n := w.count(watch.Problem); n != 0 && finished < settle/2 {
			t.Errorf("%d problems reported for a line finished %v after the watcher saw it torn; want 0", n, finished)
		}
	}
	line := a.line("never finished")
	a.write(os.O_WRONLY|os.O_APPEND, line[:20])
	e := w.waitFor("the torn line's problem", func(e watch.Event) bool { return e.Kind == watch.Problem })
	if e.Result.Torn == nil || e.Path != a.path {
		t.Errorf("Problem = %s %+v; want %s's torn line", e.Path, e.Result, a.path)
	}
	if sum := w.stop(); sum.Problems != w.count(watch.Problem) || sum.Entries != 4 {
		t.Errorf("Summary = %+v; want %d problems, 4 entries", sum, w.count(watch.Problem))
	}
}

// TestWatchRewrites: files pi rewrites whole are followed: a migration
// (the same entries in other bytes, written line by line over the old
// file; the watcher sees it half written first), and the newline pi adds
// to a last line without one when it opens the file. Nothing is reported
// as a problem.
func TestWatchRewrites(t *testing.T) {
	t.Parallel()
	_, _, a, w := watching(t, 4, watch.Options{})

	lines, rewrite, done := a.rewriting()
	rewrite(lines[:3]) // the header and two of the four entries
	w.waitFor("the half-written rewrite", func(e watch.Event) bool {
		return e.Kind == watch.Unsettled && e.Path == a.path && e.Result.Err != nil
	})
	rewrite(append(lines[3:], a.line("after the rewrite")+"\n"))
	done()
	w.caughtUp(a.id, 5)
	if !rewrittenSeen(w, a.path) {
		t.Errorf("no Imported event says %s was rewritten", a.path)
	}

	// A last line without its newline, then the newline pi adds when it
	// opens the file, then pi's next line.
	a.write(os.O_WRONLY|os.O_APPEND, a.line("no newline yet"))
	w.caughtUp(a.id, 6)
	a.write(os.O_WRONLY|os.O_APPEND, "\n")
	a.add(1)
	w.caughtUp(a.id, 7)
	if n := w.count(watch.Problem); n != 0 {
		t.Errorf("%d problems reported; want 0", n)
	}
}

func rewrittenSeen(w *running, path string) bool {
	for _, e := range w.seen {
		if e.Kind == watch.Imported && e.Path == path && e.Result.Rewritten {
			return true
		}
	}
	return false
}

// TestWatchDeletedAndMoved: a deleted file is forgotten and its session
// stays; a file moved into another folder is followed at its new path.
func TestWatchDeletedAndMoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t)
	a := newSessionFile(t, filepath.Join(dir, "a.jsonl"), "aaaa-session")
	a.add(2)
	b := newSessionFile(t, filepath.Join(dir, "b.jsonl"), "bbbb-session")
	b.add(2)
	w := startWatch(t, s, []string{dir}, watch.Options{})
	w.caughtUp(b.id, 2)

	if err := os.Remove(a.path); err != nil {
		t.Fatal(err)
	}
	w.waitFor("a's deletion", func(e watch.Event) bool { return e.Kind == watch.Gone && e.Path == a.path })
	if n := entryCount(t, s, a.id); n != 2 {
		t.Errorf("session of the deleted file has %d entries; want 2", n)
	}

	moved := filepath.Join(dir, "archive", "b.jsonl")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b.path, moved); err != nil {
		t.Fatal(err)
	}
	b.path = moved
	b.add(1)
	w.caughtUp(b.id, 3)
	if n := w.count(watch.Problem); n != 0 {
		t.Errorf("%d problems reported; want 0", n)
	}
}

// TestWatchMissingFolder: a folder that does not exist yet is waited for,
// then followed.
func TestWatchMissingFolder(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "agent", "sessions")
	s := openStore(t)
	w := startWatch(t, s, []string{root}, watch.Options{})
	w.waitFor("the wait for the folder", func(e watch.Event) bool { return e.Kind == watch.Waiting && e.Path == root })
	a := newSessionFile(t, filepath.Join(root, "--app--", "a.jsonl"), "aaaa-session")
	a.add(2)
	w.caughtUp(a.id, 2)
	a.add(1)
	w.caughtUp(a.id, 3)
}

// TestWatchMissingFolders: two folders yet to be made in one folder are
// both waited for, and followed as each appears. The first to appear
// used to end the wait of the other, then found by the rescan alone
// (never with the rescan off).
func TestWatchMissingFolders(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	ra, rb := filepath.Join(base, "a"), filepath.Join(base, "b")
	s := openStore(t)
	w := startWatch(t, s, []string{ra, rb}, watch.Options{Rescan: time.Hour})
	w.waitFor("the wait for b", func(e watch.Event) bool { return e.Kind == watch.Waiting && e.Path == rb })
	a := newSessionFile(t, filepath.Join(ra, "a.jsonl"), "aaaa-session")
	a.add(1)
	w.caughtUp(a.id, 1)
	b := newSessionFile(t, filepath.Join(rb, "b.jsonl"), "bbbb-session")
	b.add(1)
	w.caughtUp(b.id, 1)
}

// TestWatchResumes: a watch started again imports only what was written
// while none ran.
func TestWatchResumes(t *testing.T) {
	t.Parallel()
	dir, s, a, w := watching(t, 3, watch.Options{})
	if sum := w.stop(); sum.Entries != 3 {
		t.Errorf("first watch imported %d entries; want 3", sum.Entries)
	}
	a.add(2)
	w = startWatch(t, s, []string{dir}, watch.Options{})
	w.caughtUp(a.id, 5)
	if sum := w.stop(); sum.Entries != 2 || sum.NewSessions != 0 || sum.Followed != 1 {
		t.Errorf("second watch = %+v; want 2 entries, no new session, 1 file followed", sum)
	}
}

// TestWatchRescan: with every file event lost, the rescan still finds a
// file that grew, a new file in a new folder and a root that appeared.
func TestWatchRescan(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir, late := filepath.Join(base, "sessions"), filepath.Join(base, "late")
	s := openStore(t)
	a := newSessionFile(t, filepath.Join(dir, "a.jsonl"), "aaaa-session")
	a.add(1)
	opts := watch.Options{Rescan: 20 * time.Millisecond}
	watch.IgnoreEvents(&opts)
	w := startWatch(t, s, []string{dir, late}, opts)
	w.caughtUp(a.id, 1)
	a.add(2)
	w.caughtUp(a.id, 3)
	b := newSessionFile(t, filepath.Join(dir, "new", "b.jsonl"), "bbbb-session")
	b.add(1)
	w.caughtUp(b.id, 1)
	c := newSessionFile(t, filepath.Join(late, "c.jsonl"), "cccc-session")
	c.add(2)
	w.caughtUp(c.id, 2)
}

// TestWatchOneFile: a file given alone is followed; the other files of
// its folder are not.
func TestWatchOneFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t)
	a := newSessionFile(t, filepath.Join(dir, "a.jsonl"), "aaaa-session")
	a.add(1)
	w := startWatch(t, s, []string{a.path}, watch.Options{})
	w.caughtUp(a.id, 1)
	b := newSessionFile(t, filepath.Join(dir, "b.jsonl"), "bbbb-session")
	b.add(1)
	a.add(1)
	w.caughtUp(a.id, 2)
	if n := entryCount(t, s, b.id); n != -1 {
		t.Errorf("the other file's session has %d entries; want it not imported", n)
	}
}

// TestWatchReportsConflict: a second file holding a session already
// imported from a file that still exists (a copy) is a conflict, reported
// once after the settle time; the first file is still followed.
func TestWatchReportsConflict(t *testing.T) {
	t.Parallel()
	dir, s, a, w := watching(t, 2, watch.Options{Settle: 50 * time.Millisecond})
	copied, err := os.ReadFile(a.path)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "copy.jsonl")
	if err := os.WriteFile(copyPath, copied, 0o600); err != nil {
		t.Fatal(err)
	}
	e := w.waitFor("the copy's problem", func(e watch.Event) bool { return e.Kind == watch.Problem })
	if e.Path != copyPath || !errors.Is(e.Result.Err, sessiontree.ErrConflict) {
		t.Errorf("Problem = %s, %v; want %s, a conflict", e.Path, e.Result.Err, copyPath)
	}
	a.add(1)
	w.caughtUp(a.id, 3)
	if sum := w.stop(); sum.Problems != 1 || entryCount(t, s, a.id) != 3 {
		t.Errorf("Summary = %+v; want 1 problem", sum)
	}
}

// TestWatchManyWriters: files written at once, line by line, by writers
// of their own lose no line.
func TestWatchManyWriters(t *testing.T) {
	t.Parallel()
	const writers, lines = 6, 40
	dir := t.TempDir()
	s := openStore(t)
	w := startWatch(t, s, []string{dir}, watch.Options{})
	w.waitFor("the first round", func(e watch.Event) bool { return e.Kind == watch.CaughtUp })
	files := make([]*sessionFile, writers)
	for i := range files {
		files[i] = newSessionFile(t, filepath.Join(dir, strconv.Itoa(i%2), "s.jsonl"+strconv.Itoa(i)+".jsonl"), strconv.Itoa(1000+i)+"-session")
	}
	done := make(chan struct{})
	for _, f := range files {
		go func() {
			defer func() { done <- struct{}{} }()
			for range lines {
				f.add(1)
			}
		}()
	}
	for range files {
		<-done
	}
	w.waitFor("catching up with every file", func(e watch.Event) bool {
		if e.Kind != watch.CaughtUp {
			return false
		}
		for _, f := range files {
			if entryCount(t, s, f.id) != lines {
				return false
			}
		}
		return true
	})
}

// TestWatchLinks: a link in the folder to a session file outside it is
// not followed, as the import does not follow it.
func TestWatchLinks(t *testing.T) {
	t.Parallel()
	dir, s, a, w := watching(t, 1, watch.Options{})
	outside := newSessionFile(t, filepath.Join(t.TempDir(), "o.jsonl"), "oooo-session")
	outside.add(1)
	if err := os.Symlink(outside.path, filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	a.add(1)
	w.caughtUp(a.id, 2)
	if n := entryCount(t, s, outside.id); n != -1 {
		t.Errorf("the linked file's session has %d entries; want it not imported", n)
	}
}

// TestWatchFolderMoved: a folder of sessions renamed inside the watched
// folder, or moved out and back in, is followed at its new path: the
// files' sessions go on from where they were, a new file in it is
// imported, and nothing is reported unsettled.
func TestWatchFolderMoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t)
	a := newSessionFile(t, filepath.Join(dir, "proj", "deep", "a.jsonl"), "aaaa-session")
	a.add(2)
	w := startWatch(t, s, []string{dir}, watch.Options{})
	w.caughtUp(a.id, 2)
	if err := os.Rename(filepath.Join(dir, "proj"), filepath.Join(dir, "proj2")); err != nil {
		t.Fatal(err)
	}
	a.path = filepath.Join(dir, "proj2", "deep", "a.jsonl")
	a.add(1)
	w.caughtUp(a.id, 3)
	a.add(1)
	w.caughtUp(a.id, 4)
	// A new file in the moved folder.
	b := newSessionFile(t, filepath.Join(dir, "proj2", "deep", "b.jsonl"), "bbbb-session")
	b.add(2)
	w.caughtUp(b.id, 2)
	// Moved out of the watched folder, written there, moved back in.
	out := t.TempDir()
	if err := os.Rename(filepath.Join(dir, "proj2"), filepath.Join(out, "p")); err != nil {
		t.Fatal(err)
	}
	a.path = filepath.Join(out, "p", "deep", "a.jsonl")
	a.add(1)
	if err := os.Rename(filepath.Join(out, "p"), filepath.Join(dir, "proj3")); err != nil {
		t.Fatal(err)
	}
	a.path = filepath.Join(dir, "proj3", "deep", "a.jsonl")
	w.caughtUp(a.id, 5)
	a.add(1)
	w.caughtUp(a.id, 6)
	for _, e := range w.seen {
		if e.Kind == watch.Problem || e.Kind == watch.Unsettled {
			t.Errorf("event %v %s %v", e.Kind, e.Path, e.Result.Err)
		}
	}
}

// TestWatchRetriesRefusedImport: lines appended while another writer
// holds a claim on the session are refused (the import fails for that
// file alone, naming the holder); once the claim is released they are
// imported at the next rescan, without the file changing again, as pi's
// last turn of a session is never followed by another write.
func TestWatchRetriesRefusedImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s, a, w := watching(t, 1, watch.Options{Rescan: 50 * time.Millisecond})
	claim := claimSession(t, s, a.id)
	a.add(2)
	w.waitFor("the refused import", func(e watch.Event) bool {
		return e.Kind == watch.Unsettled && errors.Is(e.Result.Err, sessiontree.ErrLocked)
	})
	if err := claim.Release(ctx); err != nil {
		t.Fatal(err)
	}
	w.caughtUp(a.id, 3)
}

// TestWatchRefusedImportReportedOnce: while another writer holds the
// session's claim, renewing it (so that each refusal names another
// time), the retried import is reported as a problem once, not at every
// rescan.
func TestWatchRefusedImportReportedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s, a, w := watching(t, 1, watch.Options{Rescan: 100 * time.Millisecond, Settle: 10 * time.Millisecond})
	claim := claimSession(t, s, a.id)
	a.add(1)
	w.waitFor("the refusal reported", func(e watch.Event) bool { return e.Kind == watch.Problem })
	for range 15 {
		time.Sleep(50 * time.Millisecond)
		if err := claim.Renew(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := claim.Release(ctx); err != nil {
		t.Fatal(err)
	}
	w.caughtUp(a.id, 2)
	if n := w.count(watch.Problem); n != 1 {
		t.Errorf("%d problems reported; want the refusal once", n)
	}
}

// TestWatchIssueGoneWithoutNewLines: an unsettled file that becomes
// sound again without a new line is not reported as a problem once it
// stays so. A file rewritten whole with the same entries and nothing
// after them (pi's migration of a file it only opens) is seen half
// written, a conflict; the whole rewrite then brings nothing new. A torn
// line is cut (jsonl.Storage cuts one before it writes, and takes the
// cut back when its write fails). Each used to be reported as a problem
// the settle time after it was seen, the conflict or the torn line long
// gone.
func TestWatchIssueGoneWithoutNewLines(t *testing.T) {
	t.Parallel()
	const settle = 200 * time.Millisecond
	_, _, a, w := watching(t, 3, watch.Options{Settle: settle})

	lines, rewrite, done := a.rewriting()
	rewrite(lines[:2])
	w.waitFor("the half-written rewrite", func(e watch.Event) bool {
		return e.Kind == watch.Unsettled && e.Path == a.path && e.Result.Err != nil
	})
	rewrite(lines[2:])
	done()
	time.Sleep(3 * settle) // the conflict would have been reported by now
	before := w.drain(watch.Problem)
	if before != 0 {
		t.Errorf("%d problems reported after the rewrite was whole; want 0", before)
	}

	fi, err := os.Stat(a.path)
	if err != nil {
		t.Fatal(err)
	}
	n, leaf := a.n, a.leaf
	a.write(os.O_WRONLY|os.O_APPEND, a.line("cut short")[:30])
	w.waitFor("the torn line", func(e watch.Event) bool {
		return e.Kind == watch.Unsettled && e.Path == a.path && e.Result.Torn != nil
	})
	if err := os.Truncate(a.path, fi.Size()); err != nil {
		t.Fatal(err)
	}
	a.n, a.leaf = n, leaf
	time.Sleep(3 * settle) // the torn line would have been reported by now
	if n := w.drain(watch.Problem) - before; n != 0 {
		t.Errorf("%d problems reported after the torn line was cut; want 0", n)
	}
	a.add(1)
	w.caughtUp(a.id, 4)
}

// TestWatchRefusalImportedElsewhere: an import refused by another
// writer's claim is retried at the rescan; when another import (a
// 'sessiontree import' run meanwhile) took the lines in first, the retry
// finds nothing new, and the refusal, gone, is not reported as a
// problem once the settle time has passed.
func TestWatchRefusalImportedElsewhere(t *testing.T) {
	t.Parallel()
	const settle = time.Second
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t)
	a := newSessionFile(t, filepath.Join(dir, "a.jsonl"), "aaaa-session")
	a.add(1)
	other, err := store.Open(ctx, s.Path(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	claims := make(chan sessiontree.Claim, 1)
	opts := watch.Options{Rescan: 100 * time.Millisecond, Settle: settle, Report: func(e watch.Event) {
		if e.Kind != watch.Unsettled || !errors.Is(e.Result.Err, sessiontree.ErrLocked) {
			return
		}
		// Between the refusal and the watch's retry: the claim ends
		// and another import takes the lines in.
		if err := (<-claims).Release(ctx); err != nil {
			t.Error(err)
		}
		if _, err := other.Import(ctx, []string{a.path}, store.ImportOptions{}); err != nil {
			t.Error(err)
		}
	}}
	w := startWatch(t, s, []string{dir}, opts)
	w.caughtUp(a.id, 1)
	claim := claimSession(t, s, a.id)
	claims <- claim
	a.add(2)
	w.waitFor("the refused import", func(e watch.Event) bool {
		return e.Kind == watch.Unsettled && errors.Is(e.Result.Err, sessiontree.ErrLocked)
	})
	refused := time.Now()
	w.waitFor("the refused import's round", func(e watch.Event) bool { return e.Kind == watch.CaughtUp })
	w.waitFor("the retry's round", func(e watch.Event) bool { return e.Kind == watch.CaughtUp })
	time.Sleep(time.Until(refused.Add(2 * settle))) // the refusal would have been reported by now
	if n := w.drain(watch.Problem); n != 0 {
		t.Errorf("%d problems reported for a refusal whose lines another import took in; want 0", n)
	}
	if n := entryCount(t, s, a.id); n != 3 {
		t.Errorf("session has %d entries; want 3", n)
	}
}
