// Package sqltx runs a function in a database/sql transaction: the
// managed transaction of package migrate and package pgengine. It owns
// the transaction's life (begin, commit, rollback on an error or a panic)
// and the [CommitError] of a commit whose outcome is unknown; the
// statements and any retry are its callers'.
//
// # Concurrency
//
// Run is safe for concurrent use as far as db is.
package sqltx
