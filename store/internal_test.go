package store

// swap sets the test seam *v to x and returns a function that restores it.
func swap[T any](v *T, x T) (restore func()) {
	old := *v
	*v = x
	return func() { *v = old }
}

// SetImportChunk makes imports commit every n entries, for tests; it
// returns a function that restores the default.
func SetImportChunk(n int) (restore func()) { return swap(&importChunkEntries, n) }

// SetIndexChunk makes Index commit every n entries, for tests; it returns a
// function that restores the default.
func SetIndexChunk(n int64) (restore func()) { return swap(&indexChunk, n) }

// SetAfterAppend makes fn run after each batch of entries a one-pass
// import appends, inside its transaction; it returns a function that
// removes it.
func SetAfterAppend(fn func()) (restore func()) { return swap(&afterAppend, fn) }

// SetAppendBatch makes a one-pass import hand the engine n entries at a
// time, for tests that need several batches of a small file; it returns
// a function that restores the default.
func SetAppendBatch(n int) (restore func()) { return swap(&appendEntries, n) }

// SetIndexChunkBytes makes Index commit every n bytes of entries' JSON,
// for tests; it returns a function that restores the default.
func SetIndexChunkBytes(n int64) (restore func()) { return swap(&indexChunkBytes, n) }
