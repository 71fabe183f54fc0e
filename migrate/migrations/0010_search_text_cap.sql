-- The search index takes the first 1 MiB (1,048,576 bytes) of an
-- entry's text (issue 13); the entry itself is always stored whole.
--
-- A tool's output can be tens or hundreds of megabytes on one line. The
-- trigram tokenizer makes a token of every character and FTS5 keeps a
-- document's position lists in memory until the document is done, so one
-- 200 MB text cost 40 s and 5 GB to index, holding the write lock all
-- along; a search is no better served by the 200th megabyte of a log than
-- by its first. So search_text, what the index holds and what snippets and
-- rankings read, is now capped: each part of a text (a content block, a
-- command, an output, a summary, a name) at 1 MiB, and the whole at as
-- much, which gives exactly the first 1 MiB of the text migration 4
-- defined (then the two trailing newlines). The cut is in bytes, through
-- a blob (substr of a text stops at a NUL byte, which texts may hold),
-- so it may end inside a character: at most its first bytes are left,
-- which the tokenizer reads as one character. Below the cap nothing
-- changes.
--
-- The view also reads less to get there: it takes a content block's type
-- and text from the entry's JSON by the block's path (json_extract on
-- e.raw, whose parse SQLite reuses within a statement) instead of
-- extracting the block as JSON text and parsing that again, which for a
-- block of 200 MB copied and parsed it twice more. Tool-call arguments,
-- small, are still walked in the block.
--
-- Entries already indexed whose text may pass the cap (their JSON is
-- longer than the cap: the text is never longer than its JSON) are taken
-- out of the index with the text they went in with, and put back with the
-- capped text, so the index stays exactly what the view gives (the delete
-- trigger of migration 7 removes an entry with the view's text).

CREATE TEMP TABLE search_recap AS
SELECT e.pk FROM entries AS e JOIN sessions AS s ON s.pk = e.session
WHERE octet_length(e.raw) > 1048576 AND e.seq <= s.indexed_count
  AND e.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info');

INSERT INTO entries_fts (entries_fts, rowid, body)
SELECT 'delete', t.pk, t.body FROM search_recap AS r JOIN search_text AS t ON t.pk = r.pk;

DROP VIEW search_text;

CREATE VIEW search_text (pk, body) AS
SELECT pk, body || char(10) || char(10) FROM (
    SELECT e.pk AS pk,
           CASE e.type
               WHEN 'message' THEN CAST(substr(CAST((
                   SELECT group_concat(t, char(10)) FROM (
                       SELECT CASE c.type
                                  WHEN 'text' THEN CAST(substr(CAST(c.value AS BLOB), 1, 1048576) AS TEXT)
                                  WHEN 'object' THEN CASE json_extract(e.raw, c.fullkey || '.type')
                                      WHEN 'text' THEN CAST(substr(CAST(json_extract(e.raw, c.fullkey || '.text') AS BLOB), 1, 1048576) AS TEXT)
                                      WHEN 'thinking' THEN CAST(substr(CAST(json_extract(e.raw, c.fullkey || '.thinking') AS BLOB), 1, 1048576) AS TEXT)
                                      WHEN 'toolCall' THEN CAST(substr(CAST((
                                          SELECT group_concat(CAST(substr(CAST(a.value AS BLOB), 1, 1048576) AS TEXT), ' ')
                                          FROM json_tree(c.value, '$.arguments') AS a
                                          WHERE a.type = 'text') AS BLOB), 1, 1048576) AS TEXT)
                                  END
                              END AS t
                       FROM json_each(e.raw, '$.message.content') AS c
                       UNION ALL
                       SELECT CAST(substr(CAST(json_extract(e.raw, '$.message.command') AS BLOB), 1, 1048576) AS TEXT)
                       UNION ALL
                       SELECT CAST(substr(CAST(json_extract(e.raw, '$.message.output') AS BLOB), 1, 1048576) AS TEXT))) AS BLOB), 1, 1048576) AS TEXT)
               WHEN 'custom_message' THEN CAST(substr(CAST((
                   SELECT group_concat(CASE c.type
                                           WHEN 'text' THEN CAST(substr(CAST(c.value AS BLOB), 1, 1048576) AS TEXT)
                                           WHEN 'object' THEN CASE json_extract(e.raw, c.fullkey || '.type')
                                               WHEN 'text' THEN CAST(substr(CAST(json_extract(e.raw, c.fullkey || '.text') AS BLOB), 1, 1048576) AS TEXT)
                                           END
                                       END, char(10))
                   FROM json_each(e.raw, '$.content') AS c) AS BLOB), 1, 1048576) AS TEXT)
               WHEN 'compaction' THEN CAST(substr(CAST(json_extract(e.raw, '$.summary') AS BLOB), 1, 1048576) AS TEXT)
               WHEN 'branch_summary' THEN CAST(substr(CAST(json_extract(e.raw, '$.summary') AS BLOB), 1, 1048576) AS TEXT)
               WHEN 'session_info' THEN CAST(substr(CAST(json_extract(e.raw, '$.name') AS BLOB), 1, 1048576) AS TEXT)
           END AS body
    FROM entries AS e
    WHERE e.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
)
WHERE body <> '';

INSERT INTO entries_fts (rowid, body)
SELECT t.pk, t.body FROM search_recap AS r JOIN search_text AS t ON t.pk = r.pk;

DROP TABLE search_recap;
