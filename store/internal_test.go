package store

import (
	"io"
	"os"
)

// WithImportChunk returns opts making the import commit every n entries.
func WithImportChunk(opts ImportOptions, n int) ImportOptions {
	opts.tune.chunkEntries = n
	return opts
}

// SetIndexChunk makes s's Index commit every n entries, for tests.
func SetIndexChunk(s *Store, n int64) { s.indexTune.chunkEntries = n }

// WithAfterAppend returns opts making fn run after each batch of entries
// a one-pass import appends, inside its transaction.
func WithAfterAppend(opts ImportOptions, fn func()) ImportOptions {
	opts.tune.afterAppend = fn
	return opts
}

// WithAppendBatch returns opts making a one-pass import hand the engine n
// entries at a time, for tests that need several batches of a small file.
func WithAppendBatch(opts ImportOptions, n int) ImportOptions {
	opts.tune.appendEntries = n
	return opts
}

// SetListPage makes s's ListN read pages of n sessions, for tests.
func SetListPage(s *Store, n int) { s.listPageSize = n }

// SetIndexChunkBytes makes s's Index commit every n bytes of entries'
// JSON, for tests.
func SetIndexChunkBytes(s *Store, n int64) { s.indexTune.chunkBytes = n }

// SetIndexSerial makes s's Index read each chunk only after the one
// before it is written (no reading ahead), for benchmarks to compare.
func SetIndexSerial(s *Store, on bool) { s.indexTune.serial = on }

// WithoutGroups returns opts making the import take every file alone,
// in transactions of its own, as imports did before groups; benchmarks
// compare the two.
func WithoutGroups(opts ImportOptions) ImportOptions {
	opts.tune.alone = true
	return opts
}

// WithAfterGroup returns opts making fn run with the number of files each
// group of small files imported in one transaction, after it commits.
func WithAfterGroup(opts ImportOptions, fn func(files int)) ImportOptions {
	opts.tune.afterGroup = fn
	return opts
}

// WithAfterParse returns opts making fn run once the lines each commit
// of a file takes are parsed, before the commit is built.
func WithAfterParse(opts ImportOptions, fn func()) ImportOptions {
	opts.tune.afterParse = fn
	return opts
}

// WithReadFile returns opts making every read of a file's new part (a
// walk over it) read through fn(f) instead of f.
func WithReadFile(opts ImportOptions, fn func(f *os.File) io.ReaderAt) ImportOptions {
	opts.tune.readFile = fn
	return opts
}

// WithImportChunkBytes returns opts making the import commit every n
// bytes of a file, and take a file larger than that for two passes.
func WithImportChunkBytes(opts ImportOptions, n int64) ImportOptions {
	opts.tune.chunkBytes = n
	return opts
}

// WithAhead returns opts bounding the lines of a first pass run ahead by
// the reader goroutine at n bytes (0: the default), and making fn, when
// not nil, run after each such pass with the file, whether the writer
// takes it and whether the second pass was started ahead too. fn runs on
// the reader goroutine.
func WithAhead(opts ImportOptions, n int, fn func(path string, kept, gathered bool)) ImportOptions {
	opts.tune.aheadLine, opts.tune.afterAhead = n, fn
	return opts
}
