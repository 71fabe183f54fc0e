package pgengine

// WithBatchRows returns o with a batch's statements of n rows, so that a
// test's batch of a few hundred entries takes several.
func WithBatchRows(o Options, n int) Options {
	o.batchRows = n
	return o
}
