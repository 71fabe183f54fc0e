package sessiontree

import "context"

// HeadReader is implemented by a [Storage] that can read its log without
// the entries' JSON, as package engine does from its columns. Drawing a
// session's tree needs only where each entry hangs, so a large session's
// tree is read in a fraction of the time its log takes.
type HeadReader interface {
	// LogHeads returns every entry in append order, each with its Seq,
	// Type, ID, ParentID and Timestamp and with Raw nil.
	LogHeads(ctx context.Context) ([]Entry, error)
}

// LogHeads returns the log of st with each entry's Raw left out (see
// [HeadReader]): through st's LogHeads when it has one, else from its Log.
func LogHeads(ctx context.Context, st Storage) ([]Entry, error) {
	if h, ok := st.(HeadReader); ok {
		return h.LogHeads(ctx)
	}
	log, err := st.Log(ctx, 0, 0)
	if err != nil {
		return nil, err // the storage names the read
	}
	for i := range log {
		log[i].Raw = nil
	}
	return log, nil
}
