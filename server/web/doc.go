// Package web holds the page that `sessiontree serve` shows: its HTML,
// script and style, embedded in the binary so that a fresh machine needs no
// build step and no download to show it.
//
// The files are static, plain HTML, CSS and JavaScript modules with no
// build step: everything the page shows it asks the JSON API for, with the
// token the server handed it (js/api.js says how the token is kept).
//
// # What the page owns
//
//   - index.html and style.css: the layout, light and dark;
//   - js/app.js: the session list and search, a session's view, the
//     actions (label, move the leaf, omit, fork) and the live updates;
//   - js/graph.js: the tree as an SVG graph, drawn a window of rows at a
//     time from GET /api/sessions/{id}/graph (laid out by view.Graph);
//   - js/entry.js: an entry and the messages of a context;
//   - js/dom.js: the only way the page makes elements.
//
// # Session text
//
// Entries hold arbitrary model output. The page inserts every piece of
// session text as a text node or a checked attribute (js/dom.js refuses
// href, src, style and handler attributes made from data; an image is shown
// only as a base64 raster data URL), never as HTML. The server's
// Content-Security-Policy forbids inline script besides. The browser test
// (server/browser_test.go) holds the page to this with <script>, <img
// onerror> and javascript: in names, messages and labels.
package web
