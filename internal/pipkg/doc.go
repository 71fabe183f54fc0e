// Package pipkg installs releases of pi, the coding agent (an npm
// package), in a cache folder, for what runs pi itself beside
// sessiontree: the bench program's -vs-pi, and tests that drive pi's
// SessionManager while sessiontree reads what it writes. It owns that
// cache folder ([CacheDir]: one folder per release) and nothing else.
//
// Scripts import the package's dist/core/session-manager.js, not its
// index: pi 1.x's index reaches package-manager.js, which imports
// node:fs's globSync, and node 20 has none (1.6.0 declares node >=
// 22.19). session-manager.js and everything it imports load on node 20;
// npm installs the package there with EBADENGINE warnings only, and the
// install passes --engine-strict=false so a user's engine-strict setting
// does not refuse it.
//
// # Concurrency
//
// The functions hold no state. Processes may install the same release
// into one cache at once (go test runs test packages side by side): each
// installs into a folder of its own and renames it into place, the first
// rename wins, and a release's folder is never seen half installed. A
// folder left over by an install that was killed is named
// pi-coding-agent-VERSION.installing-*; it is never read and may be
// deleted.
package pipkg
