//go:build !unix

package fsx

// oNonblock is 0 where there are no named pipes to open without waiting.
const oNonblock = 0
