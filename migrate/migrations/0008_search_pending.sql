-- The sessions the search index lags behind, listed (issue 5).
--
-- Every search first brings the index up to date (migration 7), and to
-- know what is pending it read every sessions row for indexed_count <
-- entry_count: a full scan of the table, about 4 ms at 10,000 sessions,
-- half of what a search for a rare word costs in all. search_pending
-- holds exactly the sessions with pending entries, so that check reads a
-- table that is empty whenever the index is current.
--
-- Triggers on sessions keep it exact, whoever writes: an insert or an
-- update of entry_count or indexed_count that leaves a session pending
-- adds it, one that leaves it caught up removes it, and deleting a
-- session removes it. Appends to a session already listed cost no page
-- write: INSERT OR IGNORE finds the row and changes nothing. So the
-- engine's appends pay one small row at the first append after a search
-- and a seek in a short table at the others, and store.Store.Index, which
-- advances indexed_count, never touches the list itself.
--
-- No index on sessions would do: a partial index on the pending rows
-- changes (one more page written) at every append, because every append
-- changes entry_count, a column of its WHERE clause.

CREATE TABLE search_pending (
    session INTEGER PRIMARY KEY
);

INSERT INTO search_pending (session)
SELECT pk FROM sessions WHERE indexed_count < entry_count;

CREATE TRIGGER sessions_pending_insert AFTER INSERT ON sessions
WHEN NEW.indexed_count < NEW.entry_count
BEGIN
    INSERT OR IGNORE INTO search_pending (session) VALUES (NEW.pk);
END;

CREATE TRIGGER sessions_pending_update AFTER UPDATE OF entry_count, indexed_count ON sessions
WHEN NEW.indexed_count < NEW.entry_count
BEGIN
    INSERT OR IGNORE INTO search_pending (session) VALUES (NEW.pk);
END;

CREATE TRIGGER sessions_caught_up AFTER UPDATE OF entry_count, indexed_count ON sessions
WHEN NEW.indexed_count >= NEW.entry_count
BEGIN
    DELETE FROM search_pending WHERE session = NEW.pk;
END;

CREATE TRIGGER sessions_forget_pending AFTER DELETE ON sessions
BEGIN
    DELETE FROM search_pending WHERE session = OLD.pk;
END;
