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
// The functions hold no state. Two processes installing the same release
// into one cache at once may fail; run one install at a time.
package pipkg
