-- The tree's counts in the sessions row, kept by the writes, so that a
-- session's summary (sessiontree.Summary: what `sessiontree info` shows of
-- its tree) is one row whatever the session's size, as on the SQLite
-- engine (its migration 15), instead of every entry's (seq, parent) read
-- to the client:
--   branch_count      the tips of the tree, entries nothing but leaf
--                     entries hangs under;
--   root_count        entries whose parent is null or a leaf entry;
--   compaction_count  compaction entries;
--   label_count       the labels rows (the entries labelled now).
-- The writes keep the first three in Go by sessiontree.Shape.AddEntry
-- (pgengine/shape.go), written back with the rest of the row; the
-- trigger below keeps label_count, as the SQLite engine's does. Check
-- compares them with sessiontree.ShapeOf over the log.
ALTER TABLE sessions
    ADD COLUMN branch_count     bigint NOT NULL DEFAULT 0,
    ADD COLUMN root_count       bigint NOT NULL DEFAULT 0,
    ADD COLUMN compaction_count bigint NOT NULL DEFAULT 0,
    ADD COLUMN label_count      bigint NOT NULL DEFAULT 0;

-- The fence moves (migration 20): an engine from before this migration
-- appends without counting, and would leave the counts of every session
-- it writes to wrong for good (Check would call them corrupt, info would
-- answer wrong). Created again before the counts are read: its lock
-- waits for the writes under way, and no older write comes in after.
DROP TRIGGER sessions_schema_fence ON sessions;
CREATE TRIGGER sessions_schema_fence BEFORE INSERT OR UPDATE OR DELETE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION schema_fence('21');

-- label_count follows the labels rows: a label set on an entry without
-- one inserts a row, a label cleared deletes it (pgengine's
-- session.label; an upsert that changes a label updates its row, which
-- counts nothing). Labels are rare: one more update of a row the write
-- has locked already.
CREATE FUNCTION labels_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE sessions SET label_count = label_count + 1 WHERE pk = NEW.session;
    ELSE
        UPDATE sessions SET label_count = label_count - 1 WHERE pk = OLD.session AND NOT deleting;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER labels_count AFTER INSERT OR DELETE ON labels
    FOR EACH ROW EXECUTE FUNCTION labels_count();

-- The counts of the sessions stored so far, in one pass over the entries'
-- narrow columns (hash joins, no JSON read), in this transaction: no
-- session is left counted wrong for a while, and no process reads a
-- count before it is right. It is sessiontree.ShapeOf's rule in SQL,
-- which the engine's tests hold to ShapeOf (TestMigrationFillsTreeCounts):
-- an entry (leaf entries aside) is a root when its parent is null or not
-- in the tree (a leaf entry), a tip when no entry but a leaf entry hangs
-- under it.
UPDATE sessions s SET branch_count = c.branches, root_count = c.roots, compaction_count = c.compactions
FROM (
    SELECT e.session,
           count(*) FILTER (WHERE k.parent_seq IS NULL) AS branches,
           count(*) FILTER (WHERE p.seq IS NULL OR p.type = 'leaf') AS roots,
           count(*) FILTER (WHERE e.type = 'compaction') AS compactions
    FROM entries e
    LEFT JOIN entries p ON p.session = e.session AND p.seq = e.parent_seq
    LEFT JOIN (SELECT DISTINCT session, parent_seq FROM entries WHERE type <> 'leaf' AND parent_seq IS NOT NULL) k
        ON k.session = e.session AND k.parent_seq = e.seq
    WHERE e.type <> 'leaf'
    GROUP BY e.session
) c
WHERE s.pk = c.session;

UPDATE sessions s SET label_count = l.n
FROM (SELECT session, count(*) AS n FROM labels GROUP BY session) l
WHERE s.pk = l.session;
