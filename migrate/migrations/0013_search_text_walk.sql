-- The search_text view takes an entry's text with one walk of its JSON,
-- by entry_search_text(type, raw), a SQL function the engine defines on
-- its connections (engine/searchtext.go), instead of SQLite's JSON
-- functions (issue 13). For an entry of hundreds of megabytes migration
-- 10's view parsed the whole entry twice (json_each and json_extract over
-- it) to keep its first 1 MiB of text, and SQLite held about five times
-- the entry while the index caught up. The function reads the entry's
-- bytes in place, skips what it does not take and copies no more than the
-- cap.
--
-- The text is byte for byte the one migration 10's view gives, for every
-- entry (engine/searchtext_test.go compares the two on every entry of the
-- pi fixtures and on hand-made ones), so nothing indexed is re-indexed:
-- the index stays exactly what the view gives, and the delete trigger of
-- migration 7 removes an entry with the text it went in with. Like
-- migrations 11 and 12, this one runs only through the engine.

DROP VIEW search_text;

CREATE VIEW search_text (pk, body) AS
SELECT pk, body || char(10) || char(10) FROM (
    SELECT e.pk AS pk, entry_search_text(e.type, CAST(e.raw AS BLOB)) AS body
    FROM entries AS e
    WHERE e.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
)
WHERE body <> '';
