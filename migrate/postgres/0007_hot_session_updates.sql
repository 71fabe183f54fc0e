-- Every write updates its session's row (leaf, counters, updated_at) in
-- a HOT update (issue 15, writers): one that changes no indexed column
-- puts the new row version on the same page, without an entry in any of
-- the table's indexes, and the page's dead versions are pruned in place.
-- Two indexes made every append a full update, maintaining all five
-- indexes of sessions and leaving a dead entry in each:
--
-- * the list's index on updated_at, which every append changes. A list
--   is now a scan of the sessions rows with a top-N sort, as on SQLite
--   (whose store has no such index for the same reason); a list of one
--   cwd reads that cwd's rows by its index.
-- * the partial index of sessions with pending search entries, whose
--   predicate named entry_count. It is now on search_pending, a stored
--   generated column that changes only when a session falls behind or
--   catches up, not at every append.
--
-- The row keeps room for its new versions on its page (fillfactor 50;
-- a sessions row is small and the table holds a row per session).
-- With 16 writers, 12,114 of 12,387 updates of the bench were HOT after
-- this, none before.
DROP INDEX sessions_by_updated;
DROP INDEX sessions_search_pending;

ALTER TABLE sessions ADD COLUMN search_pending boolean GENERATED ALWAYS AS (indexed_count < entry_count) STORED;
CREATE INDEX sessions_search_pending ON sessions (pk) WHERE search_pending;

ALTER TABLE sessions SET (fillfactor = 50);
