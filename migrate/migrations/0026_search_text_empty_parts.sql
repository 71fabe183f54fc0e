-- The search index holds of an entry indexed before migration 10 the
-- text migration 4's view gave, and that text differs from today's for
-- an entry with an empty part: migration 4 joined a message's parts (its
-- content's items, command, output; a custom message's items; a tool
-- call's argument strings) with group_concat, which takes an empty
-- string as a value and adds its separator ("ls" and an empty output
-- gave "ls" and a newline), where migration 10's view (each part through
-- substr of a blob, which gives NULL for an empty one) and
-- entry_search_text since leave an empty part out. Migration 10 said
-- nothing changed below its cap and re-indexed only entries longer than
-- it, so such an entry kept a document of the old text: Check reported
-- its session corrupt (its document has more tokens than its text
-- gives), and a delete of the session gave the index the new text to
-- remove in place of the one that went in.
--
-- Those entries are taken out of the index with the old text and put
-- back with today's (search_text), as migrations 10 and 23 did. An entry
-- indexed since migration 10 has a document of today's text, which no
-- delete must meet with the old: the document's size tells which went
-- in (search_doc_size_is, the engine's: its tokens are the old text's
-- trigrams, and the old text has more characters than the new, never as
-- many). Only entries whose JSON holds an empty string ("") can have an
-- empty part, and only valid JSON is read (a damaged entry is Check's to
-- report, and the JSON functions would fail on it). Migration 4's view
-- is copied below as it shipped; like migrations 11, 12, 13, 18 and 20
-- to 25, this one runs only through the engine.

CREATE TEMP VIEW search_text_v4 (pk, body) AS
SELECT pk, body || char(10) || char(10) FROM (
    SELECT e.pk AS pk,
           CASE WHEN json_valid(e.raw) THEN CASE e.type
               WHEN 'message' THEN (
                   SELECT group_concat(t, char(10)) FROM (
                       SELECT CASE c.type
                                  WHEN 'text' THEN c.value
                                  WHEN 'object' THEN CASE json_extract(c.value, '$.type')
                                      WHEN 'text' THEN json_extract(c.value, '$.text')
                                      WHEN 'thinking' THEN json_extract(c.value, '$.thinking')
                                      WHEN 'toolCall' THEN (
                                          SELECT group_concat(a.value, ' ')
                                          FROM json_tree(c.value, '$.arguments') AS a
                                          WHERE a.type = 'text')
                                  END
                              END AS t
                       FROM json_each(e.raw, '$.message.content') AS c
                       UNION ALL
                       SELECT json_extract(e.raw, '$.message.command')
                       UNION ALL
                       SELECT json_extract(e.raw, '$.message.output')))
               WHEN 'custom_message' THEN (
                   SELECT group_concat(CASE c.type
                                           WHEN 'text' THEN c.value
                                           WHEN 'object' THEN CASE json_extract(c.value, '$.type')
                                               WHEN 'text' THEN json_extract(c.value, '$.text')
                                           END
                                       END, char(10))
                   FROM json_each(e.raw, '$.content') AS c)
               WHEN 'compaction' THEN json_extract(e.raw, '$.summary')
               WHEN 'branch_summary' THEN json_extract(e.raw, '$.summary')
               WHEN 'session_info' THEN json_extract(e.raw, '$.name')
           END END AS body
    FROM entries AS e
    WHERE e.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
      AND instr(e.raw, '""') > 0
)
WHERE body <> '';

CREATE TEMP TABLE search_v4_redo AS
SELECT o.pk AS pk, o.body AS body
FROM search_text_v4 AS o
JOIN entries AS e ON e.pk = o.pk
JOIN sessions AS s ON s.pk = e.session
JOIN entries_fts_docsize AS d ON d.id = o.pk
WHERE e.seq <= s.indexed_count
  AND o.body IS NOT (SELECT t.body FROM search_text AS t WHERE t.pk = o.pk)
  AND search_doc_size_is(d.sz, o.body);

INSERT INTO entries_fts (entries_fts, rowid, body)
SELECT 'delete', pk, body FROM search_v4_redo;

INSERT INTO entries_fts (rowid, body)
SELECT t.pk, t.body FROM search_v4_redo AS r JOIN search_text AS t ON t.pk = r.pk;

DROP TABLE search_v4_redo;

DROP VIEW search_text_v4;
