package store

// SetImportChunk makes imports commit every n entries, for tests; it
// returns a function that restores the default.
func SetImportChunk(n int) (restore func()) {
	old := importChunkEntries
	importChunkEntries = n
	return func() { importChunkEntries = old }
}

// SetIndexChunk makes Index commit every n entries, for tests; it returns a
// function that restores the default.
func SetIndexChunk(n int64) (restore func()) {
	old := indexChunk
	indexChunk = n
	return func() { indexChunk = old }
}

// SetAfterAppend makes fn run after each batch of entries a one-pass
// import appends, inside its transaction; it returns a function that
// removes it.
func SetAfterAppend(fn func()) (restore func()) {
	old := afterAppend
	afterAppend = fn
	return func() { afterAppend = old }
}

// SetAppendBatch makes a one-pass import hand the engine n entries at a
// time, for tests that need several batches of a small file; it returns
// a function that restores the default.
func SetAppendBatch(n int) (restore func()) {
	old := appendEntries
	appendEntries = n
	return func() { appendEntries = old }
}
