-- Bulk writers index their own entries (package store, issue 5).
--
-- FTS5 writes its pending index data out as a new segment whenever a
-- statement that changes it begins, so the per-row trigger of migration
-- 4, fired by a batch insert of many statements, leaves many tiny
-- segments that FTS5 then spends most of the import merging. A writer
-- that appends many entries in one transaction (the store's import) puts
-- the key range it writes into search_deferred, appends with the trigger
-- standing aside for that range, then indexes the range with one INSERT
-- ... SELECT from search_text and removes its row, all in the same
-- transaction: the index is as current at commit as with the trigger.
-- The table is empty outside such a transaction.

CREATE TABLE search_deferred (
    lo INTEGER NOT NULL,
    hi INTEGER NOT NULL,
    CHECK (lo <= hi)
);

DROP TRIGGER entries_fts_insert;

CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries
WHEN NEW.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
 AND NOT EXISTS (SELECT 1 FROM search_deferred WHERE NEW.pk BETWEEN lo AND hi)
BEGIN
    INSERT INTO entries_fts (rowid, body) SELECT pk, body FROM search_text WHERE pk = NEW.pk;
END;

-- FTS5 keeps pending index data in memory until it reaches hashsize (1
-- MiB by default) or a statement or transaction ends, and writes it out
-- as a segment that later merges rewrite. The trigram tokenizer makes a
-- token of every character, so 1 MiB fills fast; 16 MiB makes a bulk
-- write's segments sixteen times fewer and its merges cheaper (about a
-- third of the indexing time), at the cost of that much memory on the
-- writing connection during a large write.
INSERT INTO entries_fts (entries_fts, rank) VALUES ('hashsize', 16777216);
