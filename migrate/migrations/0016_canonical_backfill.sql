-- Mark the canonical rows written before migration 6 (issue 14).
--
-- Migration 6 added entries.canonical, NULL for the rows already there:
-- a reader took their common fields from a NUL-joined text of the four
-- columns, one of the three encodings issue 14 removes. A row that is not
-- canonical is now read by decoding its whole JSON, and a chunk of the
-- active path holding one is read row by row instead of packed
-- (engine/pathpack.go), so an older row left unmarked would read slower.
-- This marks, once, every unmarked row whose JSON starts with its four
-- columns exactly as json_quote writes them, followed by "," or "}": what
-- engine/canonical.go's isCanonical accepts (it also accepts other escapes
-- of the same strings; such rows stay unmarked and are decoded, which
-- gives the same fields). engine.Check verifies every mark. As in
-- migration 11, the append-only trigger is lifted for the one UPDATE.
DROP TRIGGER entries_no_update;

UPDATE entries SET canonical = 1
WHERE pk IN (
    SELECT pk FROM (
        SELECT pk, raw, '{"type":' || json_quote(type) || ',"id":' || json_quote(id)
            || ',"parentId":' || coalesce(json_quote(parent_id), 'null')
            || ',"timestamp":' || json_quote(timestamp) AS head
        FROM entries WHERE canonical IS NULL
    )
    WHERE substr(raw, 1, length(head)) = head AND substr(raw, length(head) + 1, 1) IN (',', '}')
);

CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
BEGIN
    SELECT RAISE(ABORT, 'entries are append-only: UPDATE refused');
END;
