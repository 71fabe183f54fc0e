package sessiontree

import "time"

// ImportRecord is a database's record of a session file it imported (the
// session store's import of pi files): which session the file filled, how
// much of it is imported, and where a later import resumes. The store
// decides what the fields mean for an import; an engine keeps one record
// per path and returns it as it was saved.
type ImportRecord struct {
	// Path is the file's resolved path, the record's key.
	Path string
	// SessionID is the session the file's entries went to.
	SessionID string
	// Size is the file's size the record speaks for: the imported part,
	// or the whole file once an import of it is complete.
	Size int64
	// ModTime is the file's modification time when it was imported.
	ModTime time.Time
	// ImportedBytes is how many of the file's first bytes are imported.
	ImportedBytes int64
	// PrefixSHA256 is the hex SHA-256 of those bytes.
	PrefixSHA256 string
	// Resume is where the file's reader resumes after those bytes, as the
	// reader encodes it (the JSONL reader's position, in JSON): opaque to
	// the engine.
	Resume string
	// SessionEntries is the session's entry count after the import: a
	// different count says the session was written to since.
	SessionEntries int64
	// ImportedAt is when the record was saved.
	ImportedAt time.Time
}
