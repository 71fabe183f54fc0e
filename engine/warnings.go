package engine

import (
	"github.com/sessiontree/sessiontree"
)

// UnknownTypes implements [sessiontree.DatabaseTx.UnknownTypes]: one
// grouped scan of the entries that are not messages (of one session, or
// all).
func (tx *Tx) UnknownTypes(id string, known []sessiontree.EntryType) ([]sessiontree.UnknownTypeRow, error) {
	args := make([]any, 0, len(known)+1)
	notIn := "''" // no type is known: every type but message is listed
	for i, t := range known {
		if i == 0 {
			notIn = "?"
		} else {
			notIn += ",?"
		}
		args = append(args, string(t))
	}
	where := "s.deleting = 0"
	if id != "" {
		pk, err := tx.sessionKey(id)
		if err != nil {
			return nil, err
		}
		where = "e.session = ?"
		args = append(args, pk)
	}
	rows, err := tx.tx.QueryContext(tx.ctx, `SELECT s.id, coalesce((SELECT min(path) FROM imports i WHERE i.session_id = s.id), ''),
       e.type, count(*), min(e.seq)
FROM entries e JOIN sessions s ON s.pk = e.session
WHERE e.type <> 'message' AND e.type NOT IN (`+notIn+`) AND `+where+`
GROUP BY e.session, e.type
ORDER BY e.session, min(e.seq)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sessiontree.UnknownTypeRow
	for rows.Next() {
		var r sessiontree.UnknownTypeRow
		var typ string
		var first int64
		if err := rows.Scan(&r.SessionID, &r.File, &typ, &r.Count, &first); err != nil {
			return nil, err
		}
		r.Type = sessiontree.EntryType(typ)
		out = append(out, r)
	}
	return out, rows.Err()
}
