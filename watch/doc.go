// Package watch keeps a store current while pi writes its session files:
// live import, what `sessiontree import --watch` runs.
//
// It owns the watching (file events, debounce, rescan, when a file's
// state is a problem) and nothing stored: the import and its records are
// the store's ([store.Store.Import]).
//
// # What it does
//
// [Watch] imports every session file under the paths it is given (pi's
// sessions folder by default), then follows them with the operating
// system's file events (fsnotify), subfolders included and new ones as
// they appear, and imports what changes: a new file, lines appended, a
// file rewritten whole. The import itself is [store.Store.Import]'s,
// incremental and idempotent, so a watch started again resumes where the
// last one stopped, and after each round of imports the search index is
// brought up to date ([store.Store.Index]), so an appended line is
// searchable as soon as it is imported.
//
// Events come in bursts (pi appends a tool call, its result and the next
// message within milliseconds): a changed file is imported once its
// events have paused for [Options.Debounce], and never later than
// [Options.MaxDelay] after the first event of a burst. A periodic rescan
// ([Options.Rescan]) compares every file's size and modification time
// with what was imported, in case the kernel dropped events, and arms
// watches on folders whose creation was missed; it also imports again
// every file whose last import failed in the store rather than on the
// file (sessiontree.ErrStorage: a database server restarting, say), so
// that lines appended meanwhile come once the store is back, whether or
// not the file changes again.
//
// # What pi does to its files
//
//   - A torn last line (pi's write seen half done) is left for later, as
//     the import does, and not reported while the file is live. A torn
//     line pi ended with a newline when it opened the file again after a
//     crash is skipped, as pi skips it, and named in the Imported event.
//   - A file pi rewrites whole (when it migrates an older version's file)
//     is followed by [store.ImportOptions.FollowRewrites]: when the
//     rewritten file still holds every entry of its session, in order,
//     only what comes after them is imported. A file pi writes at once (its
//     first write of a session, a fork) may be seen half written: what is
//     there is imported, the rest as it comes. The newline pi adds to a
//     last line without one when it opens a file is an append like others.
//   - A file deleted or moved away is forgotten ([Gone]); its session
//     stays in the store. A file moved inside the watched folders is
//     followed at its new path.
//   - A folder that does not exist yet is waited for: the nearest
//     existing folder above it is watched until it appears ([Waiting]).
//
// An import that failed for a reason outside the file (the storage
// failing, a full disk, another writer's claim on the session) is tried
// again at every rescan, whether the file changed or not, until it goes
// in. So is the search index's catch-up when it failed in the store
// ([IndexFailed]): the watch goes on, and what was imported becomes
// searchable once the store is back.
//
// Damage, a conflict or a torn line is [Unsettled] at first, and reported
// as a [Problem] only once the file has stayed unchanged for
// [Options.Settle] with it, once: a file seen in the middle of a rewrite
// is not damaged, only early. A version-1 file pi migrated (pi gives its
// entries new ids) and a copy of a file still there are conflicts; once
// the session is deleted from the store, the file is imported afresh at
// its next change.
//
// # Concurrency
//
// Watch runs in the goroutine that calls it and calls [Options.Report]
// from there. It holds the database's write lock only for the store's
// short transactions (one chunk of a file, one chunk of the index), so
// other processes read and write the same database meanwhile; it waits
// for theirs as the import does.
package watch
