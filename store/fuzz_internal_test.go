package store

import "github.com/sessiontree/sessiontree"

// ParseQuery parses a query as [Store.Search] does (parse: its bounds
// and the bytes it takes, then parseQuery), for the query fuzz target
// (store_test).
func ParseQuery(q string) (sessiontree.MatchQuery, error) { return parse(q, false) }
