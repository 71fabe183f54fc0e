-- The count behind the search index's merge after deletes
-- (engine/searchmerge.go), kept in the database.
--
-- A session's delete removes its indexed entries from entries_fts, which
-- FTS5 records as delete markers; the engine merges every segment into
-- one, which drops them, when the indexed entries deleted since the last
-- merge reach the rows the index holds. It counted them in the memory
-- of an open database, so a process that deleted a few sessions and
-- exited (the command line's rm, one process per command, as scripts
-- call it) never reached the count, and the garbage of its deletes
-- waited for FTS5's automerge. The one row of this table is the count:
-- each delete adds the indexed entries it removed in its own
-- transaction, and the merge sets it to 0 in its, so every process's
-- deletes count, and a rolled-back delete counts nothing.
--
-- A process that opened the database before this migration, still
-- running, deletes without counting: the count only decides when to
-- merge, no check compares it, so the schema fence does not move.
CREATE TABLE search_merge (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    deleted INTEGER NOT NULL CHECK (deleted >= 0)
);

INSERT INTO search_merge (id, deleted) VALUES (1, 0);
