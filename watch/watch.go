package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/fsx"
	"github.com/sessiontree/sessiontree/store"
)

// Defaults of [Options].
const (
	// DefaultDebounce is how long a file's events must pause before it is
	// imported: pi writes a turn's entries within milliseconds.
	DefaultDebounce = 50 * time.Millisecond
	// DefaultMaxDelay bounds the wait for a pause: a file written to
	// without one is imported this long after the first event at most.
	DefaultMaxDelay = 400 * time.Millisecond
	// DefaultRescan is how often every file's size and time are compared
	// with what was imported, for events the kernel dropped.
	DefaultRescan = 10 * time.Second
	// DefaultSettle is how long a file must stay unchanged with a torn
	// line, a conflict or damage before it is reported as a [Problem].
	DefaultSettle = 5 * time.Second
)

// Options configure [Watch]. The zero value follows the files with the
// defaults above, importing in jsonl.Recover mode, reporting nothing.
type Options struct {
	// Import configures each import (mode, longest line, waiting for
	// another process's write). Its Progress is not called; FollowRewrites
	// is always set.
	Import store.ImportOptions
	// Debounce, MaxDelay, Rescan and Settle override the defaults of the
	// same names when positive; a negative Rescan turns the rescan off.
	Debounce, MaxDelay, Rescan, Settle time.Duration
	// Report, when set, is told what happens, from the goroutine running
	// Watch and never inside a transaction.
	Report func(Event)

	// ignoreEvents drops every file event, leaving the rescan alone to
	// find changes (tests of the rescan).
	ignoreEvents bool
}

// Kind says what an [Event] reports.
type Kind int

// The kinds of events.
const (
	// Imported: a file's new entries (or a new file's session) were
	// imported; Result says what.
	Imported Kind = iota + 1
	// CaughtUp: every change seen so far is imported and indexed; sent
	// after the first import and after each round of imports that leaves
	// nothing waiting, once the search index is up to date (not while it
	// fails: IndexFailed).
	CaughtUp
	// Unsettled: a file's import met a torn last line (Result.Torn), a
	// conflict or damage (Result.Err), as it does while pi is writing or
	// rewriting the file; it is imported again when the file changes,
	// and reported as a Problem if it stays so.
	Unsettled
	// Problem: a file stayed unchanged for the settle time with a torn
	// last line (Result.Torn), a conflict or damage (Result.Err).
	Problem
	// Gone: a followed file was deleted or moved away (Path); its
	// session stays in the store.
	Gone
	// Waiting: a path to follow does not exist yet (Path); it is waited
	// for.
	Waiting
	// Dropped: the operating system's watcher lost events or failed (Err);
	// the next rescan finds what they said.
	Dropped
	// IndexFailed: bringing the search index up to date failed in the
	// store (Err matches sessiontree.ErrStorage: a database server
	// restarting, a full disk). What was imported is stored, not yet
	// searchable; the index is tried again at the next rescan or import
	// until it is up to date, and CaughtUp waits for it. Reported once
	// until the index succeeds again.
	IndexFailed
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Imported:
		return "imported"
	case CaughtUp:
		return "caught up"
	case Unsettled:
		return "unsettled"
	case Problem:
		return "problem"
	case Gone:
		return "gone"
	case Waiting:
		return "waiting"
	case Dropped:
		return "dropped"
	case IndexFailed:
		return "index failed"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Event is something [Watch] reports through [Options.Report].
type Event struct {
	// Kind says what happened.
	Kind Kind
	// Path is the file or folder concerned ("" for CaughtUp).
	Path string
	// Result is the import's result for Imported, Unsettled and Problem.
	Result store.FileResult
	// Err is the watcher's error for Dropped.
	Err error
}

// Summary is what a [Watch] did.
type Summary struct {
	// Followed counts the session files followed when it stopped.
	Followed int `json:"followed"`
	// Files counts the files entries were imported from; NewSessions the
	// sessions created.
	Files       int `json:"files"`
	NewSessions int `json:"newSessions"`
	// Entries and Bytes total what was imported.
	Entries int   `json:"entries"`
	Bytes   int64 `json:"bytes"`
	// Problems counts the Problem events.
	Problems int `json:"problems"`
	// Duration is how long it ran.
	Duration time.Duration `json:"duration"`
}

// Watch imports the session files under paths (pi's sessions folder,
// [store.PiSessionsDir], when paths is empty) into s and follows them
// until ctx is done, importing what pi writes (see the package doc). It
// then returns what it did, with a nil error: being stopped is how it
// ends. It returns an error when it cannot go on: the store closed or
// read-only, the operating system's watcher unavailable, another
// process's write lock held with [store.ImportOptions.NoWait].
func Watch(ctx context.Context, s *store.Store, paths []string, opts Options) (Summary, error) {
	start := time.Now()
	w, err := newWatcher(s, paths, opts)
	if err != nil {
		return Summary{}, err
	}
	defer w.fsw.Close()
	err = w.run(ctx)
	w.sum.Followed = len(w.files)
	w.sum.Duration = time.Since(start)
	if ctx.Err() != nil && (err == nil || errors.Is(err, ctx.Err())) {
		err = nil
	}
	return w.sum, err
}

// root is a path Watch was given.
type root struct {
	given string // absolute, as given
	real  string // resolved, once it exists ("" before)
	dir   bool
	// waitDir is the folder above it watched while it does not exist.
	waitDir string
}

// covers tells whether path, resolved, is the root's or inside it.
func (r *root) covers(path string) bool {
	if r.real == "" {
		return false
	}
	if !r.dir {
		return path == r.real
	}
	return fsx.Within(r.real, path)
}

// fileState is what the watcher knows of a file it follows.
type fileState struct {
	size int64
	mod  time.Time
	// issue is the last import's unsettled result (a torn line, a
	// conflict, damage), nil when it had none; settleAt is when to
	// report it if the file has not changed; reported says it was.
	issue    *store.FileResult
	settleAt time.Time
	reported bool
	// retry says the last import failed for a reason outside the file
	// (see retryable): the rescan imports it again, changed or not.
	retry bool
}

// unchanged tells whether fi has the size and time the file had when it
// was last imported.
func (f *fileState) unchanged(fi os.FileInfo) bool {
	return fi.Size() == f.size && fi.ModTime().Equal(f.mod)
}

// burst is a run of events on one file: its first and last events.
type burst struct{ first, last time.Time }

// watcher is one Watch's state; only its goroutine touches it.
type watcher struct {
	s          *store.Store
	opts       Options
	fsw        *fsnotify.Watcher
	roots      []*root
	dirs       map[string]bool // folders with a watch on them
	unwatched  map[string]bool // folders a watch failed on, reported
	files      map[string]*fileState
	dirty      map[string]burst
	imported   map[string]bool // files entries were imported from
	sum        Summary
	nextRescan time.Time
	rescanNow  bool // events were lost: rescan at once
	// indexDue says entries were imported and not yet indexed;
	// indexFailing that the last try failed, as reported.
	indexDue, indexFailing bool
}

func newWatcher(s *store.Store, paths []string, opts Options) (*watcher, error) {
	if len(paths) == 0 {
		dir, err := store.PiSessionsDir()
		if err != nil {
			return nil, fmt.Errorf("watch: %w", err)
		}
		paths = []string{dir}
	}
	opts.Debounce = orDefault(opts.Debounce, DefaultDebounce)
	opts.MaxDelay = orDefault(opts.MaxDelay, DefaultMaxDelay)
	opts.Settle = orDefault(opts.Settle, DefaultSettle)
	if opts.Rescan == 0 {
		opts.Rescan = DefaultRescan
	}
	opts.Import.Progress = nil
	opts.Import.FollowRewrites = true
	w := &watcher{s: s, opts: opts, dirs: map[string]bool{}, unwatched: map[string]bool{}, files: map[string]*fileState{},
		dirty: map[string]burst{}, imported: map[string]bool{}}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", p, err)
		}
		w.roots = append(w.roots, &root{given: abs})
	}
	fsw, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w.fsw = fsw
	return w, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// run is the watcher's loop.
func (w *watcher) run(ctx context.Context) error {
	if err := w.s.Database().ReadOnly(); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	for _, r := range w.roots {
		w.arm(r)
	}
	// The first round imports everything there at once.
	if err := w.importDirty(ctx, true); err != nil {
		return err
	}
	w.scheduleRescan(time.Now())
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Reset(time.Until(w.next()))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return errors.New("watch: the file watcher stopped")
			}
			if !w.opts.ignoreEvents {
				w.event(ev, time.Now())
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return errors.New("watch: the file watcher stopped")
			}
			w.report(Event{Kind: Dropped, Err: err})
			w.rescanNow = true // catch up with what was lost now, even with the rescan off
		case now := <-timer.C:
			if err := w.tick(ctx, now); err != nil {
				return err
			}
		}
	}
}

// tick does what is due at now: a rescan, imports, reports of settled
// problems.
func (w *watcher) tick(ctx context.Context, now time.Time) error {
	if w.rescanNow || w.opts.Rescan > 0 && !now.Before(w.nextRescan) {
		w.rescan()
		w.rescanNow = false
		w.scheduleRescan(now)
	}
	for path, f := range w.files {
		if f.issue != nil && !f.reported && !now.Before(f.settleAt) {
			w.settle(path, f, now)
		}
	}
	return w.importDirty(ctx, false)
}

func (w *watcher) scheduleRescan(now time.Time) {
	if w.opts.Rescan > 0 {
		w.nextRescan = now.Add(w.opts.Rescan)
	}
}

// next is when something is due: a burst's import, a problem's report,
// the rescan.
func (w *watcher) next() time.Time {
	next := time.Now().Add(time.Hour)
	switch {
	case w.rescanNow:
		return time.Now()
	case w.opts.Rescan > 0:
		next = w.nextRescan
	}
	for _, b := range w.dirty {
		next = earliest(next, w.due(b))
	}
	for _, f := range w.files {
		if f.issue != nil && !f.reported {
			next = earliest(next, f.settleAt)
		}
	}
	return next
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// due is when a burst's file is imported: once its events have paused
// for the debounce, at most the maximum delay after the first.
func (w *watcher) due(b burst) time.Time {
	return earliest(b.last.Add(w.opts.Debounce), b.first.Add(w.opts.MaxDelay))
}

// arm starts following a root: its folder tree, or its file's folder, or,
// while it does not exist, the nearest folder above it.
func (w *watcher) arm(r *root) {
	real, fi, err := resolve(r.given)
	if err != nil {
		w.waitFor(r)
		return
	}
	r.real, r.dir = real, fi.IsDir()
	w.unwait(r)
	if r.dir {
		w.addTree(real, time.Now())
		return
	}
	w.watchDir(filepath.Dir(real))
	w.consider(real, time.Now())
}

// resolve returns a path with every link followed, and what it is.
func resolve(path string) (string, os.FileInfo, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Stat(real)
	return real, fi, err
}

// waitFor watches the nearest existing folder above a root that does not
// exist, to see it appear.
func (w *watcher) waitFor(r *root) {
	first := r.waitDir == "" && r.real == ""
	was := r.real
	r.real = ""
	for {
		dir := nearestExisting(filepath.Dir(r.given))
		if dir == r.waitDir {
			break
		}
		w.unwait(r)
		r.waitDir = dir
		if err := w.fsw.Add(dir); err != nil {
			w.report(Event{Kind: Dropped, Path: dir, Err: err})
			break
		}
		// A folder made between the look and the watch is seen by
		// looking again.
	}
	if _, _, err := resolve(r.given); err == nil {
		w.arm(r)
		return
	}
	if first || was != "" {
		w.report(Event{Kind: Waiting, Path: r.given})
	}
}

// unwait ends a root's wait: the watch on the folder it waited on goes,
// unless the folder is watched for another reason, followed or waited
// on by another root (two roots in one folder yet to be made).
func (w *watcher) unwait(r *root) {
	dir := r.waitDir
	r.waitDir = ""
	if dir == "" || w.dirs[dir] {
		return
	}
	for _, o := range w.roots {
		if o.waitDir == dir {
			return
		}
	}
	_ = w.fsw.Remove(dir)
}

// nearestExisting returns dir or the nearest folder above it that exists.
func nearestExisting(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// watchDir puts a watch on a folder once. A folder that cannot be
// watched (the system's limit on watches reached, say) is reported once
// and left to the rescan, which tries again.
func (w *watcher) watchDir(dir string) {
	if w.dirs[dir] {
		return
	}
	if err := w.fsw.Add(dir); err != nil {
		if !w.unwatched[dir] {
			w.unwatched[dir] = true
			w.report(Event{Kind: Dropped, Path: dir, Err: err})
		}
		return
	}
	delete(w.unwatched, dir)
	w.dirs[dir] = true
}

// addTree watches a folder and the folders under it, and considers every
// session file in them. Links to folders are not followed, as the
// import does not follow them.
func (w *watcher) addTree(dir string, now time.Time) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir():
			w.watchDir(path)
		case isSessionFile(path):
			w.consider(path, now)
		}
		return nil
	})
}

func isSessionFile(path string) bool { return store.IsSessionFileName(filepath.Base(path)) }

// consider marks a file to import when it is new to the watcher, its
// size or time differ from when it was last imported, or that import
// failed for a reason outside the file (retryable). A link is followed
// only to a file the watch covers, as the import follows only links
// inside a folder.
func (w *watcher) consider(path string, now time.Time) {
	if !w.followable(path) {
		return
	}
	f, known := w.files[path]
	if known && !f.retry {
		fi, err := os.Stat(path)
		if err == nil && f.unchanged(fi) {
			return
		}
	}
	w.touch(path, now)
}

// followable tells whether a path is not a link, or a link to a file
// the watch covers.
func (w *watcher) followable(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	return err != nil || real == path || w.covered(real)
}

// touch records an event on a file.
func (w *watcher) touch(path string, now time.Time) {
	b, ok := w.dirty[path]
	if !ok {
		b.first = now
	}
	b.last = now
	w.dirty[path] = b
}

// covered tells whether a path is one Watch follows: a root's file, or
// inside a root's folder.
func (w *watcher) covered(path string) bool {
	for _, r := range w.roots {
		if r.covers(path) {
			return true
		}
	}
	return false
}

// event takes one file event.
func (w *watcher) event(ev fsnotify.Event, now time.Time) {
	name := filepath.Clean(ev.Name)
	for _, r := range w.roots {
		switch {
		case r.real == "" && fsx.Within(name, r.given):
			w.arm(r) // a folder on the way to a waited-for root appeared
		case r.real == name && ev.Has(fsnotify.Remove|fsnotify.Rename):
			// The root itself went away: its files are looked at (and
			// found gone), and it is waited for again.
			if r.dir {
				w.dropTree(name)
			} else {
				w.touch(name, now)
			}
			w.waitFor(r)
			return
		}
	}
	if !w.covered(name) {
		return
	}
	if ev.Has(fsnotify.Remove|fsnotify.Rename) && w.dirs[name] {
		w.dropTree(name)
		return
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(name); err == nil && fi.IsDir() {
			w.addTree(name, now)
			return
		}
	}
	if (isSessionFile(name) || w.isRootFile(name)) && w.followable(name) {
		w.touch(name, now)
	}
}

func (w *watcher) isRootFile(path string) bool {
	for _, r := range w.roots {
		if !r.dir && r.real == path {
			return true
		}
	}
	return false
}

// dropTree forgets the watches of a folder deleted or moved away, and of
// the folders under it; its files are looked at (and found gone).
func (w *watcher) dropTree(dir string) {
	for d := range w.dirs {
		if fsx.Within(dir, d) {
			_ = w.fsw.Remove(d)
			delete(w.dirs, d)
		}
	}
	now := time.Now()
	for path := range w.files {
		if fsx.Within(dir, path) {
			w.touch(path, now)
		}
	}
}

// rescan compares every file under the roots with what was imported,
// arms roots that appeared and watches folders whose events were lost.
func (w *watcher) rescan() {
	now := time.Now()
	for _, r := range w.roots {
		if r.real == "" {
			if _, err := os.Stat(r.given); err == nil {
				w.arm(r)
			}
			continue
		}
		if _, err := os.Stat(r.real); err != nil {
			w.waitFor(r)
			continue
		}
		if r.dir {
			w.addTree(r.real, now)
		} else {
			w.consider(r.real, now)
		}
	}
	for path := range w.files {
		if _, err := os.Lstat(path); err != nil {
			w.touch(path, now)
		}
	}
}

// importDirty imports the files whose bursts are due (all of them when
// all is set), brings the search index up to date and says when nothing
// is left waiting.
func (w *watcher) importDirty(ctx context.Context, all bool) error {
	paths := w.duePaths(all)
	if len(paths) == 0 && !all && !w.indexDue {
		return nil
	}
	if err := w.importPaths(ctx, paths); err != nil {
		return err
	}
	if err := w.index(ctx); err != nil {
		return err
	}
	if len(w.dirty) == 0 && !w.indexDue {
		w.report(Event{Kind: CaughtUp})
	}
	return nil
}

// duePaths takes the files whose bursts are due (all of them when all is
// set) off the dirty list, in order.
func (w *watcher) duePaths(all bool) []string {
	now := time.Now()
	var paths []string
	for path, b := range w.dirty {
		if all || !now.Before(w.due(b)) {
			paths = append(paths, path)
			delete(w.dirty, path)
		}
	}
	slices.Sort(paths)
	return paths
}

// importPaths imports files and records what each import did.
func (w *watcher) importPaths(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	// Each file's size and time are taken before it is read: a write
	// during the import then makes them differ, and the file is looked
	// at again.
	before := map[string]os.FileInfo{}
	for _, p := range paths {
		if real, fi, err := resolve(p); err == nil {
			before[real] = fi
		}
	}
	rep, err := w.s.Import(ctx, paths, w.opts.Import)
	for _, res := range rep.Files {
		w.take(res, before[res.Path], time.Now())
	}
	if rep.Entries > 0 {
		w.indexDue = true
	}
	return err
}

// index brings the search index up to date when imports left it behind.
// A failure in the store (sessiontree.ErrStorage: the database server
// restarting, a full disk) is reported once and tried again at the next
// round (a rescan, an import): what was imported stays, to be indexed
// once the store is back.
func (w *watcher) index(ctx context.Context) error {
	if !w.indexDue {
		return nil
	}
	idx := store.IndexOptions{NoWait: w.opts.Import.NoWait, Waiting: w.opts.Import.Waiting}
	_, err := w.s.Index(ctx, idx)
	switch {
	case err == nil:
		w.indexDue, w.indexFailing = false, false
	case ctx.Err() != nil:
		return ctx.Err() // stopped, however the store said it
	case errors.Is(err, sessiontree.ErrStorage):
		if !w.indexFailing {
			w.indexFailing = true
			w.report(Event{Kind: IndexFailed, Err: err})
		}
	default:
		return fmt.Errorf("watch: %w", err)
	}
	return nil
}

// take records one file's import.
func (w *watcher) take(res store.FileResult, fi os.FileInfo, now time.Time) {
	f, known := w.files[res.Path]
	if fi == nil && res.Err == nil {
		fi, _ = os.Stat(res.Path) // it was created while it was looked at
	}
	if errors.Is(res.Err, fs.ErrNotExist) || fi == nil {
		if known {
			delete(w.files, res.Path)
			w.report(Event{Kind: Gone, Path: res.Path})
		}
		return
	}
	if !known {
		f = &fileState{}
		w.files[res.Path] = f
	}
	changed := !f.unchanged(fi)
	f.size, f.mod, f.retry = fi.Size(), fi.ModTime(), retryable(res.Err)
	w.tally(res)
	switch {
	case res.Err != nil || res.Torn != nil:
		// Unsettled: reported if it is still so once the file has
		// stayed as it is for the settle time.
		if f.issue == nil || f.reported && issueText(*f.issue) != issueText(res) {
			f.reported = false
		}
		f.issue, f.settleAt = &res, now.Add(w.opts.Settle)
		w.report(Event{Kind: Unsettled, Path: res.Path, Result: res})
	case res.Outcome != store.OutcomeUnchanged || changed || f.issue != nil && f.issue.Torn == nil:
		// Sound again: new lines; the file changed and nothing is amiss
		// (a rewrite now whole with nothing new, a torn line cut); a
		// failure gone (the store back, another import done first).
		// Only a torn line stands through an import that found the
		// file as it was, which need not have read the line again.
		f.issue, f.reported = nil, false
	}
}

// tally counts what an import brought in the summary and reports it.
func (w *watcher) tally(res store.FileResult) {
	if res.Entries == 0 && res.Bytes == 0 && res.Outcome != store.OutcomeNew {
		return
	}
	w.sum.Entries += res.Entries
	w.sum.Bytes += res.Bytes
	if res.Outcome == store.OutcomeNew {
		w.sum.NewSessions++
	}
	if res.Entries > 0 && !w.imported[res.Path] {
		w.imported[res.Path] = true
		w.sum.Files++
	}
	w.report(Event{Kind: Imported, Path: res.Path, Result: res})
}

// retryable tells whether an import failed for a reason outside the
// file, which may pass while the file stays as it is (pi's last turn of a
// session is its last write): the storage failing (a full disk), another
// writer's claim on the session.
func retryable(err error) bool {
	return errors.Is(err, sessiontree.ErrStorage) || errors.Is(err, sessiontree.ErrLocked)
}

// issueText identifies an unsettled result, so that the same one is
// reported once. A retryable failure is identified by its kind: the
// import is tried again at every rescan, and another writer's claim is
// named with its lease, which each renewal moves.
func issueText(r store.FileResult) string {
	for _, kind := range []error{sessiontree.ErrLocked, sessiontree.ErrStorage} {
		if errors.Is(r.Err, kind) {
			return kind.Error()
		}
	}
	if r.Err != nil {
		return r.Err.Error()
	}
	if r.Torn != nil {
		return r.Torn.Error()
	}
	return ""
}

// settle reports a file's issue if the file has not changed since the
// import that found it; a file that changed is imported again instead.
func (w *watcher) settle(path string, f *fileState, now time.Time) {
	fi, err := os.Stat(path)
	if err != nil || !f.unchanged(fi) {
		f.settleAt = now.Add(w.opts.Settle)
		w.touch(path, now)
		return
	}
	f.reported = true
	w.sum.Problems++
	w.report(Event{Kind: Problem, Path: path, Result: *f.issue})
}

func (w *watcher) report(e Event) {
	if w.opts.Report != nil {
		w.opts.Report(e)
	}
}
