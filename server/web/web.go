// Package web holds the page that `sessiontree serve` shows: its HTML,
// script and style, embedded in the binary so that a fresh machine needs no
// build step and no download to show it.
//
// The files are static: everything the page shows it asks the JSON API for,
// with the token the server handed it.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Files returns the page's files, with index.html at the root. It is safe
// for concurrent use.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// fs.Sub fails only on an invalid path, and "static" is valid.
		panic(err)
	}
	return sub
}
