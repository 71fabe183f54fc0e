package storetest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// The damages RunCheckMutations makes (see checkmutation.go).

// mutations lists every damage.
func (h *CheckMutationHarness) mutations(t *testing.T) []mutation {
	t.Helper()
	key := h.one(t, `SELECT pk FROM sessions WHERE id = `+quote(h.IDs[0]))
	other := h.one(t, `SELECT pk FROM sessions WHERE id = `+quote(h.IDs[1]))
	kinds := h.entryKinds(t, key)
	var out []mutation
	for i := range h.Tables {
		tb := &h.Tables[i]
		for _, r := range h.rowPicks(tb, key, kinds) {
			out = append(out, h.rowMutations(tb, r, key, other)...)
		}
	}
	return append(out, h.entryMutations(t, key, kinds)...)
}

// one is the single value query returns.
func (h *CheckMutationHarness) one(t *testing.T, query string) string {
	t.Helper()
	vals, err := h.Query(query)
	if err != nil || len(vals) != 1 {
		t.Fatalf("%s: %v, %v", query, vals, err)
	}
	return vals[0]
}

// entryKind is a kind of entries row of the damaged session, and its seq.
type entryKind struct {
	name string
	seq  string
}

// entryKinds finds one entry of each kind in the session whose key is
// key; kinds the session has none of are left out.
func (h *CheckMutationHarness) entryKinds(t *testing.T, key string) []entryKind {
	t.Helper()
	branch := `SELECT ` + h.BranchSeq + ` FROM branch WHERE session = ` + key
	var out []entryKind
	for _, k := range []entryKind{
		{"leaf", `SELECT max(` + h.BranchSeq + `) FROM branch WHERE session = ` + key},
		{"on the path", branch + ` AND depth = 2`},
		{"off the path", `SELECT min(seq) FROM entries WHERE session = ` + key + ` AND seq NOT IN (` + branch + `)`},
		{"root", `SELECT min(seq) FROM entries WHERE session = ` + key + ` AND parent_id IS NULL`},
		{"label", `SELECT min(seq) FROM entries WHERE session = ` + key + ` AND type = 'label'`},
		{"compaction", `SELECT min(seq) FROM entries WHERE session = ` + key + ` AND type = 'compaction'`},
		{"last", `SELECT max(seq) FROM entries WHERE session = ` + key},
	} {
		vals, err := h.Query(k.seq)
		if err != nil {
			t.Fatalf("%s: %v", k.seq, err)
		}
		if len(vals) == 1 && vals[0] != "" {
			out = append(out, entryKind{k.name, vals[0]})
		}
	}
	return out
}

// rowPick is a row of a table to damage: a condition selecting it (and
// partner, another row, for swaps), by the rows of mut_save.
type rowPick struct {
	name, where, partner string
}

// rowPicks are the rows of tb damaged: one of each entry kind in
// entries, the damaged session's row in sessions, the session's first
// row by key elsewhere (the table's first when it has no session).
func (h *CheckMutationHarness) rowPicks(tb *MutationTable, key string, kinds []entryKind) []rowPick {
	if tb.Name == "entries" {
		var out []rowPick
		for i, k := range kinds {
			if slices.ContainsFunc(kinds[:i], func(o entryKind) bool { return o.seq == k.seq }) {
				continue // one row of two kinds (the leaf is often the last)
			}
			p := kinds[(i+1)%len(kinds)]
			out = append(out, rowPick{k.name, `session = ` + key + ` AND seq = ` + k.seq, `session = ` + key + ` AND seq = ` + p.seq})
		}
		return out
	}
	pk := columnList(&MutationTable{Columns: keyColumns(tb)}, func(c MutationColumn) string { return c.Name })
	nth := func(cond string, n int) string {
		return `(` + pk + `) = (SELECT ` + pk + ` FROM mut_save` + cond + ` ORDER BY ` + pk + ` LIMIT 1 OFFSET ` + strconv.Itoa(n) + `)`
	}
	switch {
	case tb.Name == "sessions":
		return []rowPick{{"the session's", `pk = ` + key, nth(` WHERE pk <> `+key, 0)}}
	case tb.Session == "":
		return []rowPick{{"first", nth("", 0), nth("", 1)}}
	}
	return []rowPick{{"the session's first", nth(` WHERE `+h.sessionIs(tb, key), 0), nth(` WHERE `+h.sessionIs(tb, key), 1)}}
}

// keyColumns are tb's primary key columns (every column when none is).
func keyColumns(tb *MutationTable) []MutationColumn {
	var out []MutationColumn
	for _, c := range tb.Columns {
		if c.Key {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return tb.Columns
	}
	return out
}

// sessionIs is the condition that a row of tb belongs to the session
// whose key is key.
func (h *CheckMutationHarness) sessionIs(tb *MutationTable, key string) string {
	if tb.SessionByID {
		return tb.Session + ` = (SELECT id FROM sessions WHERE pk = ` + key + `)`
	}
	return tb.Session + ` = ` + key
}

// rowMutations are the damages to row r of tb: each column changed, set
// NULL and swapped with the partner's; the row deleted, and copied to a
// session that does not exist and to the session whose key is other.
func (h *CheckMutationHarness) rowMutations(tb *MutationTable, r rowPick, key, other string) []mutation {
	var out []mutation
	session := h.IDs[0]
	if tb.Session == "" {
		session = "" // the row's session is not known
	}
	column := ""
	add := func(what string, stmts ...string) {
		out = append(out, mutation{name: fmt.Sprintf("%s: %s row: %s", tb.Name, r.name, what), session: session, table: tb, stmts: stmts,
			column: column, namesEntry: tb.Name == "entries" && column != "" && column != "entries.session",
			header: tb.Name == "sessions" && slices.Contains(HeaderColumns, strings.TrimPrefix(column, "sessions."))})
	}
	upd := `UPDATE ` + tb.Name + ` SET `
	for _, c := range tb.Columns {
		column = tb.Name + "." + c.Name
		add(c.Name+" changed", upd+c.Name+` = `+changed(c)+` WHERE `+r.where)
		if c.Kind == 'i' {
			add(c.Name+" lowered", upd+c.Name+` = `+c.Name+` - 1 WHERE `+r.where)
		}
		if !c.NotNull {
			add(c.Name+" NULL", upd+c.Name+` = NULL WHERE `+r.where)
		}
		add(c.Name+" swapped", upd+c.Name+` = (SELECT `+c.Name+` FROM mut_save WHERE `+r.partner+`) WHERE `+r.where,
			upd+c.Name+` = (SELECT `+c.Name+` FROM mut_save WHERE `+r.where+`) WHERE `+r.partner)
	}
	column = ""
	add("deleted", `DELETE FROM `+tb.Name+` WHERE `+r.where)
	// A copy is the damage of the session it lands in: a new one for a
	// sessions row, none for another table's.
	session = ""
	if tb.Name == "sessions" {
		session = h.IDs[0] + "-stray"
	}
	add("copied to a missing session", h.copyRow(tb, r, "999999"))
	if tb.Session != "" && tb.Name != "sessions" {
		session = h.IDs[1]
		add("copied to another session", h.copyRow(tb, r, other))
	}
	return out
}

// changed is an SQL expression of a value of c other than its own.
func changed(c MutationColumn) string {
	switch c.Kind {
	case 'i':
		return `coalesce(` + c.Name + `, 0) + 1`
	case 'r':
		return `coalesce(` + c.Name + `, 0) * 2 + 1`
	case 'b':
		return `NOT coalesce(` + c.Name + `, false)`
	}
	return `coalesce(` + c.Name + `, '') || 'x'`
}

// copyRow inserts a copy of row r of tb into the session whose key is
// to, skipping a copy whose key is taken.
func (h *CheckMutationHarness) copyRow(tb *MutationTable, r rowPick, to string) string {
	cols := columnList(tb, func(c MutationColumn) string { return c.Name })
	exprs := columnList(tb, func(c MutationColumn) string { return h.moved(tb, c.Name, to) })
	return `INSERT INTO ` + tb.Name + ` (` + cols + `)` + tb.Overriding + ` SELECT ` + exprs +
		` FROM mut_save WHERE ` + r.where + ` ON CONFLICT DO NOTHING`
}

// moved is the expression of column col of a row of tb copied to the
// session whose key is to.
func (h *CheckMutationHarness) moved(tb *MutationTable, col, to string) string {
	if h.Moved != nil {
		if e := h.Moved(tb.Name, col, to); e != "" {
			return e
		}
	}
	switch {
	case tb.Name == "sessions" && col == "pk":
		return to
	case tb.Name == "sessions" && col == "id":
		return `id || '-stray'`
	case col == tb.Session && tb.SessionByID:
		return `coalesce((SELECT id FROM sessions WHERE pk = ` + to + `), 'no-such-session')`
	case col == tb.Session, tb.Session == "" && col == "session":
		return to
	case col == "seq":
		return `seq + 1000000`
	case tb.Name == "imports" && col == "path":
		return `path || '-stray'` // a file of its own
	}
	return col
}

// entryMutations are the damages to entries that keep each row's
// checksum right: the rows as a writer that broke the tree's rules
// would have written them.
func (h *CheckMutationHarness) entryMutations(t *testing.T, key string, kinds []entryKind) []mutation {
	t.Helper()
	seq := map[string]string{}
	for _, k := range kinds {
		seq[k.name] = k.seq
	}
	tb := h.table("entries")
	var out []mutation
	add := func(what string, stmts ...string) {
		out = append(out, mutation{name: "entries: " + what, session: h.IDs[0], table: tb, stmts: stmts, namesEntry: true})
	}
	// A cycle: the root's parent made an entry below it.
	add("the root's parent is the leaf (a cycle)", h.reparent(t, key, seq["root"], seq["leaf"]))
	add("an entry its own parent", h.reparent(t, key, seq["on the path"], seq["on the path"]))
	add("a parent that comes later", h.reparent(t, key, seq["on the path"], seq["last"]))
	add("the root's parent columns name the leaf (a cycle in the columns)", h.parentColumns(key, seq["root"], seq["leaf"]))
	add("an entry's parent columns name itself", h.parentColumns(key, seq["off the path"], seq["off the path"]))
	add("an entry's parent columns name a later entry", h.parentColumns(key, seq["on the path"], seq["last"]))
	add("a parent that does not exist", h.rewrite(t, key, seq["on the path"], func(raw, id, parent string) (string, string) {
		return setParent(raw, parent, "no-such-entry"), `parent_id = 'no-such-entry', ` + h.ParentKey + ` = NULL`
	}))
	add("a torn last line", h.rewrite(t, key, seq["last"], func(raw, id, parent string) (string, string) {
		return raw[:len(raw)/2], ""
	}))
	add("an id taken by another entry", h.rewrite(t, key, seq["off the path"], func(raw, id, parent string) (string, string) {
		taken := h.one(t, `SELECT id FROM entries WHERE session = `+key+` AND seq = `+seq["root"])
		return strings.Replace(raw, `"id":"`+id+`"`, `"id":"`+taken+`"`, 1), `id = ` + quote(taken)
	}))
	return out
}

// table is the MutationTable named name.
func (h *CheckMutationHarness) table(name string) *MutationTable {
	for i := range h.Tables {
		if h.Tables[i].Name == name {
			return &h.Tables[i]
		}
	}
	panic("no table " + name)
}

// reparent is the statement making entry seq of the session whose key
// is key a child of entry parentSeq, its JSON and checksum with it.
func (h *CheckMutationHarness) reparent(t *testing.T, key, seq, parentSeq string) string {
	t.Helper()
	parentID := h.one(t, `SELECT id FROM entries WHERE session = `+key+` AND seq = `+parentSeq)
	return h.rewrite(t, key, seq, func(raw, id, parent string) (string, string) {
		return setParent(raw, parent, parentID), `parent_id = ` + quote(parentID) + `, ` + h.ParentKey +
			` = (SELECT ` + h.EntryKey + ` FROM mut_save WHERE session = ` + key + ` AND seq = ` + parentSeq + `)`
	})
}

// parentColumns is the statement pointing the parent columns (not the
// JSON) of entry seq of the session whose key is key at entry parentSeq.
func (h *CheckMutationHarness) parentColumns(key, seq, parentSeq string) string {
	parent := ` FROM mut_save WHERE session = ` + key + ` AND seq = ` + parentSeq + `)`
	return `UPDATE entries SET parent_id = (SELECT id` + parent + `, ` + h.ParentKey + ` = (SELECT ` + h.EntryKey + parent +
		` WHERE session = ` + key + ` AND seq = ` + seq
}

// rewrite is the statement replacing the JSON of entry seq of the
// session whose key is key by what edit makes of it (given its JSON, id
// and parent id), with its checksum, and setting the columns edit lists.
func (h *CheckMutationHarness) rewrite(t *testing.T, key, seq string, edit func(raw, id, parent string) (string, string)) string {
	t.Helper()
	where := ` WHERE session = ` + key + ` AND seq = ` + seq
	raw := h.one(t, `SELECT raw FROM entries`+where)
	id := h.one(t, `SELECT id FROM entries`+where)
	parent := h.one(t, `SELECT coalesce(parent_id, '') FROM entries`+where)
	newRaw, set := edit(raw, id, parent)
	if set != "" {
		set = ", " + set
	}
	return fmt.Sprintf(`UPDATE entries SET raw = %s, checksum = %d%s%s`, quote(newRaw), sessiontree.EntryChecksum([]byte(newRaw)), set, where)
}

// setParent replaces the parentId of an entry's JSON (from, "" for
// null) by to, in place, the JSON's order kept.
func setParent(raw, from, to string) string {
	old := `"parentId":null`
	if from != "" {
		old = `"parentId":"` + from + `"`
	}
	return strings.Replace(raw, old, `"parentId":"`+to+`"`, 1)
}
