-- The vocabulary of the search index: every trigram of search_text's
-- folded text (three characters from every place), as FTS5's
-- vocabulary gives the SQLite engine's. The store expands a query of one
-- or two characters, which has no trigram of its own, into the terms
-- that start with it, or scans when there are more than it takes
-- (store/search.go, expand): with the same terms on both engines the
-- same query takes the same path and gives the same hits. Before, on
-- PostgreSQL, a short phrase was its own term: never scanned (a common
-- one was ranked where SQLite gives the newest hits, rank 0; inside a
-- larger query it was searched where SQLite refuses it as too common),
-- and matched by a LIKE no index answers (pg_trgm has no trigram of it):
-- a read of the whole table, newest first, for a rare one. The expanded
-- terms are each a LIKE the trigram index answers.
--
-- The index catch-up adds the terms of the text it writes
-- (pgengine.WriteIndexChunk). A term stays when the text holding it is
-- deleted: it then expands a short query into a phrase nothing
-- matches. term is compared byte by byte (COLLATE "C"), in code point
-- order, as FTS5 compares its terms and Go its strings.
--
-- This fills it from the text indexed so far, a row's characters split
-- once (string_to_array) so that each trigram is taken in constant time:
-- it reads every folded text once.
CREATE TABLE search_terms (
    term text COLLATE "C" PRIMARY KEY
);

INSERT INTO search_terms (term)
SELECT DISTINCT c[i] || c[i + 1] || c[i + 2]
FROM search_text t
CROSS JOIN LATERAL (SELECT string_to_array(t.folded, NULL) AS c) a
CROSS JOIN LATERAL generate_series(1, coalesce(array_length(a.c, 1), 0) - 2) i;
