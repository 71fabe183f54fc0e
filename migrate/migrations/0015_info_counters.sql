-- The counts `sessiontree info` shows about a session's tree, kept in its
-- sessions row so that info reads one row, never the log (issue 17):
--   branch_count      the tips of the tree: entries nothing was appended
--                     under, leaf entries aside;
--   root_count        entries without a parent in the tree: a null
--                     parent, or a leaf entry as parent (leaf entries are
--                     not part of the tree);
--   compaction_count  compaction entries;
--   label_count       the rows of labels: entries that carry a label now.
-- The rules are sessiontree.ShapeOf's, over the log without leaf entries;
-- engine.Check replays every session through it against these columns.
--
-- Triggers keep them, whoever writes (an append, a batch import, the
-- store), as the search_pending triggers of migration 8 do. An entry
-- appended under the entry stored just before it (parent_pk = pk - 1),
-- which is most of them, changes no count unless that entry is a leaf
-- entry or it is a compaction: the trigger's WHEN is false and it writes
-- nothing. Otherwise it adds, in the sessions row the append writes
-- anyway, a root when the entry has no parent in the tree, and a branch
-- when it has none or its parent already had a child (the parent was a
-- tip before and is not now, unless it already was not). The earlier
-- children of the parent are the entry right after it and the entries
-- of entries_by_parent (migration 6), so that check is two seeks.
-- Labels are counted as the labels table gains and loses rows (an
-- upsert that changes a label inserts no row).

ALTER TABLE sessions ADD COLUMN branch_count     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN root_count       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN compaction_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN label_count      INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER entries_count_shape AFTER INSERT ON entries
WHEN NEW.type <> 'leaf'
 AND (NEW.parent_pk IS NULL OR NEW.parent_pk <> NEW.pk - 1 OR NEW.type = 'compaction'
      OR (SELECT type FROM entries WHERE pk = NEW.parent_pk) = 'leaf')
BEGIN
    UPDATE sessions SET
        root_count = root_count + r.orphan,
        branch_count = branch_count + (r.orphan OR r.forks),
        compaction_count = compaction_count + (NEW.type = 'compaction')
    FROM (SELECT NEW.parent_pk IS NULL
                 OR (SELECT type FROM entries WHERE pk = NEW.parent_pk) = 'leaf' AS orphan,
                 EXISTS (SELECT 1 FROM entries AS c
                         WHERE c.pk = NEW.parent_pk + 1 AND c.pk < NEW.pk
                           AND c.parent_pk = NEW.parent_pk AND c.type <> 'leaf')
                 OR EXISTS (SELECT 1 FROM entries AS c
                            WHERE c.parent_pk = NEW.parent_pk AND c.parent_pk <> c.pk - 1
                              AND c.pk < NEW.pk AND c.type <> 'leaf') AS forks) AS r
    WHERE sessions.pk = NEW.session;
END;

CREATE TRIGGER labels_count_insert AFTER INSERT ON labels
BEGIN
    UPDATE sessions SET label_count = label_count + 1 WHERE pk = NEW.session;
END;

CREATE TRIGGER labels_count_delete AFTER DELETE ON labels
BEGIN
    UPDATE sessions SET label_count = label_count - 1 WHERE pk = OLD.session;
END;

-- Existing sessions, by the same rules.
UPDATE sessions SET
    compaction_count = (SELECT count(*) FROM entries
                        WHERE session = sessions.pk AND type = 'compaction' AND type <> 'message'),
    label_count = (SELECT count(*) FROM labels WHERE session = sessions.pk),
    root_count = (SELECT count(*) FROM entries AS e
                  WHERE e.session = sessions.pk AND e.type <> 'leaf'
                    AND (e.parent_pk IS NULL
                         OR (SELECT type FROM entries WHERE pk = e.parent_pk) = 'leaf')),
    branch_count = (SELECT count(*) FROM entries AS e
                    WHERE e.session = sessions.pk AND e.type <> 'leaf'
                      AND NOT EXISTS (SELECT 1 FROM entries AS c
                                      WHERE c.pk = e.pk + 1 AND c.parent_pk = e.pk AND c.type <> 'leaf')
                      AND NOT EXISTS (SELECT 1 FROM entries AS c
                                      WHERE c.parent_pk = e.pk AND c.parent_pk <> c.pk - 1
                                        AND c.type <> 'leaf'));

-- The roots of each session (entries without a parent), for the folded
-- tree (engine.Storage.Outline), which finds every other entry it names
-- through entries_by_parent, entries_by_type, labels and branch. Few
-- entries are roots, so few appends write a page of it.
CREATE INDEX entries_roots ON entries (session) WHERE parent_pk IS NULL;
