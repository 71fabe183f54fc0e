-- How many indexed texts hold each term of search_terms (migration 13),
-- so that a term goes when the last text holding it does, as a term of
-- FTS5's vocabulary does on SQLite. Before, a deleted session's terms
-- stayed: they counted toward the terms a query of one or two
-- characters is expanded into, and could make it too common where
-- SQLite expands it: scanned instead of ranked alone, refused inside a
-- larger query.
--
-- The index catch-up adds each new text to the counts of its terms
-- (pgengine.WriteIndexChunk), a session's delete takes its texts off and
-- deletes the terms left at 0 (pgengine.deleteSession).
--
-- This counts the texts indexed so far, each text's trigrams taken once
-- (as migration 13 splits them), and drops the terms no text holds.
ALTER TABLE search_terms ADD COLUMN texts bigint NOT NULL DEFAULT 0;

UPDATE search_terms s SET texts = c.n
FROM (
    SELECT g, count(*) AS n
    FROM (
        SELECT DISTINCT t.session, t.seq, a.c[i] || a.c[i + 1] || a.c[i + 2] AS g
        FROM search_text t
        CROSS JOIN LATERAL (SELECT string_to_array(t.folded, NULL) AS c) a
        CROSS JOIN LATERAL generate_series(1, coalesce(array_length(a.c, 1), 0) - 2) i
    ) x
    GROUP BY g
) c
WHERE s.term = c.g;

DELETE FROM search_terms WHERE texts = 0;

ALTER TABLE search_terms ALTER COLUMN texts DROP DEFAULT;
