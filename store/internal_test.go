package store

// swap sets the test seam *v to x and returns a function that restores it.
func swap[T any](v *T, x T) (restore func()) {
	old := *v
	*v = x
	return func() { *v = old }
}

// WithImportChunk returns opts making the import commit every n entries.
func WithImportChunk(opts ImportOptions, n int) ImportOptions {
	opts.tune.chunkEntries = n
	return opts
}

// SetIndexChunk makes Index commit every n entries, for tests; it returns a
// function that restores the default.
func SetIndexChunk(n int64) (restore func()) { return swap(&indexChunk, n) }

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

// SetIndexChunkBytes makes Index commit every n bytes of entries' JSON,
// for tests; it returns a function that restores the default.
func SetIndexChunkBytes(n int64) (restore func()) { return swap(&indexChunkBytes, n) }
