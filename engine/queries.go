package engine

import "strings"

// The SQL the engine runs. Each connection prepares a statement the first
// time it runs it and keeps it (see conn.stmt, which says what that buys). All values are bound
// parameters; the statements of the hot paths number them by position
// (plain ?), which the driver binds without looking up names.

const (
	qInsertSession = `INSERT INTO sessions (id, version, created_at, cwd, parent_session, updated_at, header_checksum)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`

	qSessionByID = `SELECT pk, id, version, created_at, cwd, coalesce(parent_session, '')
FROM sessions WHERE id = ?1 AND deleting = 0`

	qSessionLeaf = `SELECT coalesce(leaf_id, '') FROM sessions WHERE pk = ?1`
	qSessionName = `SELECT coalesce(name, '') FROM sessions WHERE pk = ?1`
	qEntryCount  = `SELECT entry_count FROM sessions WHERE pk = ?1`
	// qSessionStats reads the session's counters and its cost breakdown
	// (see breakdown.go).
	qSessionStats = `SELECT entry_count, message_count, user_messages, assistant_messages,
       tool_results, tool_calls, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, cost, CAST(usage_buckets AS BLOB)
FROM sessions WHERE pk = ?1`

	// qWriteState reads, inside a write transaction, what an append needs:
	// the leaf and what the new entry inherits from it.
	qWriteState = `SELECT s.deleting, s.leaf_pk, coalesce(s.leaf_id, ''), s.leaf_depth, s.entry_count,
       s.first_user_text IS NOT NULL, s.cost, CAST(s.usage_buckets AS BLOB),
       e.start_depth, e.thinking_pk, e.model_pk, e.tools_pk, coalesce(e.type = 'leaf', 0)
FROM sessions s LEFT JOIN entries e ON e.pk = s.leaf_pk
WHERE s.pk = ?`

	// entryColumns are the columns of an entries row as entryArgs lists
	// them.
	entryColumns = `pk, session, seq, id, parent_id, parent_pk, type, timestamp,
    depth, start_depth, thinking_pk, model_pk, tools_pk, target_id, custom_type, role, raw, canonical, checksum`
	entryParams = 19

	qInsertEntry = `INSERT INTO entries (` + entryColumns + `)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	qInsertBranch = `INSERT INTO branch (session, depth, entry) VALUES (?, ?, ?)`

	qUpdateSession = `UPDATE sessions SET
    leaf_pk = ?, leaf_id = ?, leaf_depth = ?, boundary_depth = ?,
    entry_count = entry_count + ?, message_count = message_count + ?,
    user_messages = user_messages + ?, assistant_messages = assistant_messages + ?,
    tool_results = tool_results + ?, tool_calls = tool_calls + ?,
    input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
    cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
    cost = ?, usage_buckets = coalesce(?, usage_buckets), updated_at = ?,
    name = CASE WHEN ? THEN ? ELSE name END,
    first_user_text = coalesce(first_user_text, ?),
    branch_count = branch_count + ?, root_count = root_count + ?, compaction_count = compaction_count + ?
WHERE pk = ?`

	qUpsertLabel = `INSERT INTO labels (session, target_id, label, entry) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (session, target_id) DO UPDATE SET label = excluded.label, entry = excluded.entry`

	qDeleteLabel = `DELETE FROM labels WHERE session = ?1 AND target_id = ?2`

	// qEntryNode reads what a child inherits from an entry, and whether
	// it is a leaf entry (see shape.go).
	qEntryNode = `SELECT pk, depth, start_depth, thinking_pk, model_pk, tools_pk, type = 'leaf'
FROM entries WHERE session = ?1 AND id = ?2`

	// qHadChild tells whether entry ?1 has a child other than a leaf
	// entry with a key below ?2: the entry right after it, or one of
	// entries_by_parent (two seeks).
	qHadChild = `SELECT EXISTS (SELECT 1 FROM entries
               WHERE pk = ?1 + 1 AND pk < ?2 AND parent_pk = ?1 AND type <> 'leaf')
    OR EXISTS (SELECT 1 FROM entries
               WHERE parent_pk = ?1 AND parent_pk <> pk - 1 AND pk < ?2 AND type <> 'leaf')`

	// qEntryPlace tells where an entry is and whether it lies on the
	// active branch (the branch row at its depth is itself).
	qEntryPlace = `SELECT e.pk, e.depth, e.start_depth, coalesce(b.entry = e.pk, 0)
FROM entries e LEFT JOIN branch b ON b.session = e.session AND b.depth = e.depth
WHERE e.session = ?1 AND e.id = ?2`

	// qAncestorAt returns the ancestor of entry ?1 at depth ?2, walking
	// parent links; each step must go up exactly one level, so it ends.
	qAncestorAt = `WITH RECURSIVE up(pk, parent_pk, depth) AS (
    SELECT pk, parent_pk, depth FROM entries WHERE pk = ?1
    UNION ALL
    SELECT e.pk, e.parent_pk, e.depth FROM up JOIN entries e ON e.pk = up.parent_pk
    WHERE up.depth > ?2 AND e.depth = up.depth - 1
)
SELECT pk FROM up WHERE depth = ?2`

	qEntryByID  = `SELECT ` + entryCols + ` FROM entries e WHERE e.session = ?1 AND e.id = ?2`
	qEntryTaken = `SELECT count(*) FROM entries WHERE session = ?1 AND id = ?2`
	// qByType uses the partial index entries_by_type, which holds every
	// type but message; qMessages reads messages by the session's key
	// range, since they are most of it.
	qByType = `SELECT ` + entryCols + ` FROM entries e
WHERE e.session = ?1 AND e.type = ?2 AND e.type <> 'message' ORDER BY e.pk`
	qMessages = `SELECT ` + entryCols + ` FROM entries e
WHERE e.pk BETWEEN ?1 AND ?2 AND e.type = 'message' ORDER BY e.pk`
	qLog = `SELECT ` + entryCols + ` FROM entries e
WHERE e.pk > ?1 AND e.pk <= ?2 ORDER BY e.pk LIMIT ?3`
	// qLogHeads reads the common fields of a session's entries, by its key
	// range, without their JSON (Storage.LogHeads).
	qLogHeads = `SELECT e.pk, e.type, e.id, coalesce(e.parent_id, ''), e.timestamp
FROM entries e WHERE e.pk BETWEEN ?1 AND ?2 ORDER BY e.pk`
	qLastSeq = `SELECT seq FROM entries WHERE pk BETWEEN ?1 AND ?2 ORDER BY pk DESC LIMIT 1`

	// qBranchRange reads the active path between two depths: one range
	// scan of the branch, one rowid lookup per entry.
	qBranchRange = `SELECT ` + entryCols + `
FROM branch b JOIN entries e ON e.pk = b.entry
WHERE b.session = ?1 AND b.depth BETWEEN ?2 AND ?3 ORDER BY b.depth`

	qLabel  = `SELECT label FROM labels WHERE session = ?1 AND target_id = ?2`
	qLabels = `SELECT target_id, label FROM labels WHERE session = ?1`

	// qState reads the latest state-setting entries on the full path of
	// an entry: each entry points at them, inherited from its parent. It
	// reads each pointer with the row it names, for State to check that
	// the row is there and sets the state.
	qState = `SELECT e.pk, e.thinking_pk, t.pk, t.type, CAST(t.raw AS BLOB), t.checksum,
       e.model_pk, m.pk, m.type, CAST(m.raw AS BLOB), m.checksum,
       e.tools_pk, o.pk, o.type, CAST(o.raw AS BLOB), o.checksum
FROM entries e
LEFT JOIN entries t ON t.pk = e.thinking_pk
LEFT JOIN entries m ON m.pk = e.model_pk
LEFT JOIN entries o ON o.pk = e.tools_pk
WHERE e.session = ?1 AND e.id = ?2`

	qSessionPK     = `SELECT pk, indexed_count FROM sessions WHERE id = ?1`
	qMarkDeleting  = `UPDATE sessions SET deleting = 1 WHERE pk = ?1`
	qDeleteBranch  = `DELETE FROM branch WHERE session = ?1`
	qDeleteLabels  = `DELETE FROM labels WHERE session = ?1`
	qDeleteEntries = `DELETE FROM entries WHERE pk BETWEEN ?1 AND ?2`
	qDeleteSession = `DELETE FROM sessions WHERE pk = ?1`
)

// entryCols are the columns an Entry is read from (see scanEntry): its key
// (the seq is its low 32 bits), its JSON as a blob (which the driver hands
// over without converting it to a string), the JSON's checksum, and its
// canonical mark (see canonical.go). The common fields come from the JSON:
// a canonical row's starts with them, and any other row's holds what its
// columns do (the row is refused when written otherwise). A path of
// thousands of rows costs mostly per column fetched.
const entryCols = `e.pk, CAST(e.raw AS BLOB), e.checksum, e.canonical`

// qWalk walks parent ids from entry ?2 of session ?1 towards the root,
// at most ?3 entries (no valid path is longer than the session's log, so
// a walk that hits the bound is on a cycle), and stops at the first entry
// at a depth of ?4 or less: the start depth that sessiontree.Place stored for
// entry ?2 (its compaction boundary), or 0 for a full path. The walk does
// not read the compaction rule from the JSON again: Place is its one
// owner, and the branch reads the same start depth. It returns the path
// leaf first with each row's depth and stop flag; the caller checks that
// the depths go up one a step to the start depth or a root, and otherwise
// reports a missing parent, a cycle or damaged depths.
const qWalk = `WITH RECURSIVE walk(n, pk, parent_id, depth, stop) AS (
    SELECT 0, NULL, ?2, 0, 0
    UNION ALL
    SELECT w.n + 1, e.pk, e.parent_id, e.depth, e.depth <= ?4
    FROM walk w JOIN entries e ON e.session = ?1 AND e.id = w.parent_id
    WHERE w.stop = 0 AND w.n < ?3
)
SELECT w.n, w.depth, w.stop, ` + entryCols + `
FROM walk w JOIN entries e ON e.pk = w.pk ORDER BY w.n`

// batchRows is how many rows one multi-row INSERT of a batch carries.
const batchRows = 64

// multiRow repeats a VALUES tuple of n parameters rows times.
func multiRow(head string, n, rows int) string {
	var b strings.Builder
	b.WriteString(head)
	for r := range rows {
		if r > 0 {
			b.WriteString(",")
		}
		b.WriteString("(")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("?")
		}
		b.WriteString(")")
	}
	return b.String()
}

var qInsertEntries = multiRow(`INSERT INTO entries (`+entryColumns+`) VALUES `, entryParams, batchRows)
