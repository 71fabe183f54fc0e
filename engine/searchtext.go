package engine

import (
	"bytes"
	"database/sql/driver"
	"fmt"
	"unicode/utf8"

	"modernc.org/sqlite"

	"github.com/sessiontree/sessiontree"
)

// The search text of an entry (migration 13) is
// [sessiontree.SearchText]'s, computed by one walk of its JSON in Go and
// handed to SQLite by the SQL function entry_search_text. Migration 10's
// search_text view took it with SQLite's JSON functions, which parse the
// whole entry, twice (json_each and json_extract over it), to take the
// first 1 MiB of each part: for an entry of 200 MB, the index's catch-up
// held about five times that at once; now it holds SQLite's read of the
// entry, once. The walk keeps the rules of that view exactly, so the text
// of every entry, and so the index, is unchanged.

// sqlSearchTextFunc is the SQL function the engine's connections have for
// the search_text view: entry_search_text(type, raw) is the
// sessiontree.SearchText of the entry's type and JSON, as a JSON array of
// it ([] when it has none; see registerSearchText).
const sqlSearchTextFunc = "entry_search_text"

// sqlIndexedTextFunc is the SQL function migration 23's search_text view
// calls: entry_indexed_text(type, raw) is entry_search_text's text made
// the text an index holds, [sessiontree.IndexedText] (a NUL a space,
// bytes that are not UTF-8 left out), as on PostgreSQL.
// entry_search_text stays for migrations 13 and 23, which read the text
// the index held before.
const sqlIndexedTextFunc = "entry_indexed_text"

// sqlDocSizeIsFunc is the SQL function migration 26 tells by which text
// an entry went into the index: search_doc_size_is(sz, body) is 1 when
// sz, the entry's document size in the index (entries_fts_docsize.sz, a
// varint of its tokens), is the trigram count of body, else 0.
const sqlDocSizeIsFunc = "search_doc_size_is"

// registerSearchText gives d's connections entry_search_text(type, raw),
// raw a blob (pass CAST(raw AS BLOB)): the SearchText of the entry as a
// JSON array of it, or [] when the entry has none, for the search_text
// view to take with json_each. A table-valued json_each computes it once
// per entry, where a plain value that the view both filters on and
// returns is computed twice (SQLite flattens the view and copies the
// call), and with it the entry read and copied twice more. Its arguments
// are SQLite's own memory (VolatileArgs), not copies: the walk keeps no
// part of them, only copies of what it takes.
func registerSearchText(d *sqlite.Driver) error {
	for name, indexed := range map[string]bool{sqlSearchTextFunc: false, sqlIndexedTextFunc: true} {
		err := d.RegisterFunction(name, &sqlite.FunctionImpl{NArgs: 2, Deterministic: true, VolatileArgs: true,
			Scalar: func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
				return searchTextSQL(name, indexed, a)
			}})
		if err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	err := d.RegisterDeterministicScalarFunction(sqlDocSizeIsFunc, 2, func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		sz, ok1 := a[0].([]byte)
		body, ok2 := a[1].(string)
		if !ok1 || !ok2 {
			return false, nil
		}
		n, ok := varint(sz)
		return ok && n == uint64(trigrams([]byte(body))), nil // SQLite's 1 or 0
	})
	if err != nil {
		return fmt.Errorf("register %s: %w", sqlDocSizeIsFunc, err)
	}
	return nil
}

// searchTextSQL is entry_search_text, or with indexed entry_indexed_text.
func searchTextSQL(name string, indexed bool, a []driver.Value) (driver.Value, error) {
	typ, _ := a[0].(string)
	raw, ok := a[1].([]byte)
	if !ok {
		return nil, fmt.Errorf("%s: want a blob, got %T", name, a[1])
	}
	text, ok, err := sessiontree.AppendSearchText(nil, typ, raw)
	if err != nil {
		return nil, err
	}
	if !ok {
		return "[]", nil
	}
	if indexed && (bytes.IndexByte(text, 0) >= 0 || !utf8.Valid(text)) {
		text = []byte(sessiontree.IndexedText(string(text))) // not copied for most texts
	}
	return string(appendJSONArrayOf(make([]byte, 0, len(text)+len(text)/8+8), text)), nil
}

// appendJSONArrayOf appends the JSON array of the one string s, whose
// bytes SQLite's json_each gives back exactly: quotes, backslashes and
// control bytes escaped, all others, invalid UTF-8 too, as they are.
func appendJSONArrayOf(b, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '[', '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"', ']')
}
