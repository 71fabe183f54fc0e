-- The search_text view takes an entry's text with one walk of its JSON,
-- by entry_search_text(type, raw), a SQL function the engine defines on
-- its connections (engine/searchtext.go), instead of SQLite's JSON
-- functions (issue 13). For an entry of hundreds of megabytes migration
-- 10's view parsed the whole entry twice (json_each and json_extract over
-- it) to keep its first 1 MiB of text, and SQLite held about five times
-- the entry while the index caught up. The function reads the entry's
-- bytes in place, skips what it does not take and copies no more than the
-- cap. It gives the text as a JSON array of it ([] for none), which
-- json_each, a table, takes once per entry: a value the view both
-- filtered on (no row without text) and returned was computed twice, and
-- the entry read and copied twice with it, as SQLite flattens the view.
--
-- The text is byte for byte the one migration 10's view gives, for every
-- entry (engine/searchtext_test.go compares the two on every entry of the
-- pi fixtures and on hand-made ones), so nothing indexed is re-indexed:
-- the index stays exactly what the view gives, and the delete trigger of
-- migration 7 removes an entry with the text it went in with. Like
-- migrations 11 and 12, this one runs only through the engine.

DROP VIEW search_text;

CREATE VIEW search_text (pk, body) AS
SELECT e.pk AS pk, t.value || char(10) || char(10) AS body
FROM entries AS e, json_each(entry_search_text(e.type, CAST(e.raw AS BLOB))) AS t
WHERE e.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info');
