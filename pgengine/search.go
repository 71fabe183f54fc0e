package pgengine

import (
	"errors"

	"github.com/sessiontree/sessiontree"
)

// UnsupportedError reports a method of the contract this engine does not
// implement yet (search, on PostgreSQL). It matches errors.ErrUnsupported.
type UnsupportedError struct{ Op string }

// Error names the method.
func (e *UnsupportedError) Error() string {
	return "PostgreSQL engine: " + e.Op + " is not supported yet"
}

// Is makes an UnsupportedError match errors.ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// IndexBacklog is not supported yet.
func (tx *Tx) IndexBacklog() (int64, error) { return 0, &UnsupportedError{Op: "IndexBacklog"} }

// NextIndexChunk is not supported yet.
func (tx *Tx) NextIndexChunk(maxEntries, maxBytes int64) (sessiontree.IndexChunk, error) {
	return sessiontree.IndexChunk{}, &UnsupportedError{Op: "NextIndexChunk"}
}

// WriteIndexChunk is not supported yet.
func (tx *Tx) WriteIndexChunk(c sessiontree.IndexChunk) error {
	return &UnsupportedError{Op: "WriteIndexChunk"}
}

// MatchKeys is not supported yet.
func (tx *Tx) MatchKeys(scope sessiontree.SearchScope, match string, limit int) ([]int64, error) {
	return nil, &UnsupportedError{Op: "MatchKeys"}
}

// ScanKeys is not supported yet.
func (tx *Tx) ScanKeys(scope sessiontree.SearchScope, text string, limit int) ([]int64, error) {
	return nil, &UnsupportedError{Op: "ScanKeys"}
}

// ExpandTerms is not supported yet.
func (tx *Tx) ExpandTerms(from, to string, limit int) ([]string, error) {
	return nil, &UnsupportedError{Op: "ExpandTerms"}
}

// PendingTexts is not supported yet.
func (tx *Tx) PendingTexts(scope sessiontree.SearchScope, maxEntries int, maxBytes int64) (sessiontree.PendingTexts, error) {
	return sessiontree.PendingTexts{}, &UnsupportedError{Op: "PendingTexts"}
}

// Texts is not supported yet.
func (tx *Tx) Texts(keys []int64) ([]sessiontree.KeyText, error) {
	return nil, &UnsupportedError{Op: "Texts"}
}

// Hits is not supported yet.
func (tx *Tx) Hits(keys []int64, text bool) ([]sessiontree.HitRow, error) {
	return nil, &UnsupportedError{Op: "Hits"}
}

// TextIndex is not supported yet.
func (tx *Tx) TextIndex(texts []sessiontree.KeyText) (sessiontree.TextIndex, error) {
	return nil, &UnsupportedError{Op: "TextIndex"}
}
