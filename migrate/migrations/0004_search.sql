-- Full-text search over the text of entries (package store, issue 5).
--
-- search_text is the text of each entry worth finding, computed from its
-- JSON by SQLite's JSON functions: message content (a string, or text,
-- thinking and tool-call argument blocks; tool results are messages too),
-- a bash execution's command and output, custom-message content,
-- compaction and branch summaries, and session names (session_info).
-- Entries of other types, and entries without text, have no row.
--
-- entries_fts indexes it as an external-content FTS5 table: the text is
-- not stored twice, snippets are cut from the view, and the rowid is the
-- entry's key (entries.pk = session * 2^32 + seq), so a search within
-- one session is a rowid range.
--
-- Tokenizer: trigram. Chinese and Japanese are written without spaces
-- between words, so a word tokenizer (unicode61, porter) would index a
-- whole run of CJK text as one token and never find a word inside it;
-- trigram indexes every three-character sequence, so any substring of
-- three or more characters is found in any script, and in English it
-- also finds parts of identifiers and paths (store.go, parent_id), which
-- coding sessions are full of. Matching is case-insensitive. Queries of
-- one or two characters (common in CJK: 日本, 猫) have no trigram of
-- their own; the store answers them from the index's vocabulary (the
-- trigrams that start with them; every text ends in a newline so that
-- its last characters start one too) or, when too many trigrams do, by
-- scanning.
--
-- The triggers keep the index in the transaction of every insert into
-- entries, whatever writes it (an append, a batch import, a fork), and
-- of a session's delete (the BEFORE trigger reads the text the index
-- must remove while the row is still there).

CREATE VIEW search_text (pk, body) AS
SELECT pk, body || char(10) || char(10) FROM (
    SELECT e.pk AS pk,
           CASE e.type
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
           END AS body
    FROM entries AS e
    WHERE e.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
)
WHERE body <> '';

CREATE VIRTUAL TABLE entries_fts USING fts5 (
    body,
    content = 'search_text',
    content_rowid = 'pk',
    tokenize = 'trigram'
);

-- The index's vocabulary: the store expands a one- or two-character
-- query into the trigrams that start with it.
CREATE VIRTUAL TABLE entries_fts_vocab USING fts5vocab (entries_fts, 'row');

CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries
WHEN NEW.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
BEGIN
    INSERT INTO entries_fts (rowid, body) SELECT pk, body FROM search_text WHERE pk = NEW.pk;
END;

CREATE TRIGGER entries_fts_delete BEFORE DELETE ON entries
WHEN OLD.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, body)
    SELECT 'delete', pk, body FROM search_text WHERE pk = OLD.pk;
END;

-- Existing databases gain the index of everything already stored. (Not
-- with FTS5's 'rebuild' command: FTS5 reads the content for it, as for
-- 'integrity-check' with rank 1, through statements that may not use
-- virtual tables, and the view needs json_each and json_tree. Queries,
-- snippets and these triggers read the view normally.)
INSERT INTO entries_fts (rowid, body) SELECT pk, body FROM search_text;
