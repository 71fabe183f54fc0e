-- Search (pgengine/search.go; the query language and ranking are the
-- store's, store/search.go, as on SQLite).
--
-- An entry's search text is engine.SearchText's, as on SQLite, computed
-- in Go when the entry is indexed: appends write entries only, and the
-- index catches up afterwards (store.Index), a chunk at a time. Each
-- session's row keeps its mark: entries 1..indexed_count are in
-- search_text, the rest are pending (a search reads those itself).
--
-- search_text keeps the text twice: body as it is (snippets, ranking)
-- and folded, lower-cased in Go (strings.ToLower) so that matching
-- ignores case the same way whatever the database's locale; PostgreSQL's
-- text holds no NUL byte nor invalid UTF-8, so a NUL becomes a space and
-- invalid bytes are dropped. A phrase is a LIKE '%...%' on folded, which
-- the trigram index (pg_trgm, in postgresql-contrib) answers for any
-- script, CJK included; a phrase of fewer than three characters has no
-- trigram and is checked row by row.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

ALTER TABLE sessions ADD COLUMN indexed_count bigint NOT NULL DEFAULT 0;

-- The sessions with pending entries, so that the check every search
-- makes first reads an empty index, not every session.
CREATE INDEX sessions_search_pending ON sessions (pk) WHERE indexed_count < entry_count;

CREATE TABLE search_text (
    session bigint NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
    seq     bigint NOT NULL,
    body    text   NOT NULL,
    folded  text   NOT NULL,
    PRIMARY KEY (session, seq)
);

CREATE INDEX search_text_trgm ON search_text USING gin (folded gin_trgm_ops);
