-- The search index catches up instead of being written by every append
-- (issues 4 and 5).
--
-- Indexing an entry's text costs far more than storing the entry: the
-- trigram tokenizer makes a token of every character, and FTS5 writes a
-- new segment (and merges older ones) at every commit that changed the
-- index. The per-row trigger of migration 4 made a single append five to
-- fifteen times as slow as the rest of it, and held a batch import to the
-- tokenizer's speed. Now a write stores entries only, and
-- sessions.indexed_count says how many of a session's entries the index
-- holds: seq 1 .. indexed_count are indexed, the rest (up to entry_count)
-- are pending. A search first brings every pending entry into the index,
-- in one write transaction per batch of sessions that also advances
-- their indexed_count (store.Store.Index), so every search still sees
-- every committed entry; the command line's import runs it right after
-- importing, so that the next search does not pay for it.
-- Indexing many entries at once makes one FTS5 segment of them instead
-- of one per append. A crash cannot tear the two apart: the index and
-- indexed_count change in one transaction.

ALTER TABLE sessions ADD COLUMN indexed_count INTEGER NOT NULL DEFAULT 0
    CHECK (indexed_count >= 0 AND indexed_count <= entry_count);

UPDATE sessions SET indexed_count = entry_count;

DROP TRIGGER entries_fts_insert;

DROP TABLE search_deferred;

-- Deleting a session removes from the index only what the index holds.
DROP TRIGGER entries_fts_delete;

CREATE TRIGGER entries_fts_delete BEFORE DELETE ON entries
WHEN OLD.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
 AND OLD.seq <= (SELECT indexed_count FROM sessions WHERE pk = OLD.session)
BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, body)
    SELECT 'delete', pk, body FROM search_text WHERE pk = OLD.pk;
END;
