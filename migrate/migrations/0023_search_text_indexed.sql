-- The text the search index holds of an entry is the same on every
-- engine, sessiontree.IndexedText of its search text: each NUL a space
-- (sessiontree.DerivedText, as the README says of every text derived
-- from an entry) and the bytes that are not UTF-8 left out (a lone
-- surrogate's escape, \ud800, decodes to such bytes), as PostgreSQL's
-- search_text holds it. SQLite's view kept both: "a b" missed an entry
-- whose text held a NUL between a and b (and found one with a NUL beside
-- a space), a snippet showed the NUL byte, and the ranks of texts holding
-- such bytes differed, where PostgreSQL found, showed and ranked by the
-- text made valid. The view now calls entry_indexed_text (engine/
-- searchtext.go), entry_search_text's text made so.
--
-- The indexed entries whose text changes are taken out of the index with
-- the text they went in with, read by the view before it changes, and put
-- back with the new one, as migration 10 did: the index stays exactly
-- what the view gives (the delete trigger removes an entry with the view's
-- text). Finding them walks the JSON of every indexed entry with text
-- twice, once; an entry whose JSON is damaged (Check's to report) is
-- left as it is, the function would fail on it. Like migrations 11, 12, 13, 18 and 22, this one runs only
-- through the engine.

CREATE TEMP TABLE search_redo AS
SELECT e.pk FROM entries AS e JOIN sessions AS s ON s.pk = e.session
WHERE e.seq <= s.indexed_count
  AND e.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
  AND CASE WHEN json_valid(e.raw)
      THEN entry_search_text(e.type, CAST(e.raw AS BLOB)) <> entry_indexed_text(e.type, CAST(e.raw AS BLOB))
      ELSE 0 END;

INSERT INTO entries_fts (entries_fts, rowid, body)
SELECT 'delete', t.pk, t.body FROM search_redo AS r JOIN search_text AS t ON t.pk = r.pk;

DROP VIEW search_text;

CREATE VIEW search_text (pk, body) AS
SELECT e.pk AS pk, t.value || char(10) || char(10) AS body
FROM entries AS e, json_each(entry_indexed_text(e.type, CAST(e.raw AS BLOB))) AS t
WHERE e.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info');

INSERT INTO entries_fts (rowid, body)
SELECT t.pk, t.body FROM search_redo AS r JOIN search_text AS t ON t.pk = r.pk;

DROP TABLE search_redo;
