package store

import "github.com/sessiontree/sessiontree"

// ParseQuery is parseQuery, for the query fuzz target (store_test).
func ParseQuery(q string) (sessiontree.MatchQuery, error) { return parseQuery(q) }
