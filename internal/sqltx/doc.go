// Package sqltx runs a function in a database/sql transaction: the
// managed transaction of package migrate and package pgengine.
//
// # Concurrency
//
// Run is safe for concurrent use as far as db is.
package sqltx
