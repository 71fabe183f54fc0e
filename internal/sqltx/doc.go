// Package sqltx runs a function in a database/sql transaction: the
// managed transaction of package migrate and package pgengine. It owns
// the transaction's life (begin, commit, rollback on an error or a panic),
// the [CommitError] of a commit whose outcome is unknown, and the answer
// of a transaction whose context ended: database/sql rolls it back then,
// and its statements and commit fail with sql.ErrTxDone, which Run and
// [Ended] (the SQLite engine's transactions' rule too) answer with the
// context's error. The statements and any retry are its callers'.
//
// # Concurrency
//
// Run is safe for concurrent use as far as db is.
package sqltx
