-- What the session store needs of the PostgreSQL engine (package store on
-- sessiontree.Database): entry checksums, usage per day, import records,
-- and the indexes of the session list and of id prefixes.

-- The checksum of each entry's JSON (engine.EntryChecksum, CRC-32C, a
-- number from 0 to 2^32-1), computed by the write that stores it and
-- verified by every export and by Check. Entries stored before this
-- migration have none (NULL); the engine had no users before it.
ALTER TABLE entries ADD COLUMN checksum bigint;

-- The session list: newest-updated first, ties by key, read backwards
-- from a cursor. Timestamps compare as bytes, as on SQLite.
CREATE INDEX sessions_by_updated ON sessions ((updated_at COLLATE "C"), pk);

-- Id prefixes: a LIKE 'prefix%' in byte order is a range of this index.
CREATE INDEX sessions_by_id_bytes ON sessions ((id COLLATE "C"));

-- Usage per session, day and bucket (the SQLite engine's migration 12):
-- a row sums the usage records of one session that count on one day
-- (sessiontree.UsageDay, '' for a timestamp that is not RFC 3339) in one
-- bucket (sessiontree.StatsOf's key), kept by every write in its
-- transaction, so that a usage report reads these rows, never the
-- entries. Costs are added one record at a time in log order.
CREATE TABLE usage_days (
    day         text    NOT NULL,
    session     bigint  NOT NULL REFERENCES sessions (pk),
    bucket      text    NOT NULL,
    input       bigint  NOT NULL,
    output      bigint  NOT NULL,
    cache_read  bigint  NOT NULL,
    cache_write bigint  NOT NULL,
    cost        double precision NOT NULL,
    PRIMARY KEY (day, session, bucket)
);

CREATE INDEX usage_days_by_session ON usage_days (session);

-- What importing pi's session files remembers about each file, by
-- absolute path (sessiontree.ImportRecord; the SQLite engine's migration
-- 3). Deleting a session deletes its records (pgengine's DeleteSession).
CREATE TABLE imports (
    path            text    PRIMARY KEY,
    session_id      text    NOT NULL,
    size            bigint  NOT NULL,
    mtime_ns        bigint  NOT NULL,
    imported_bytes  bigint  NOT NULL,
    prefix_sha256   text    NOT NULL,
    position        text    NOT NULL,
    session_entries bigint  NOT NULL,
    imported_at     text    NOT NULL
);

CREATE INDEX imports_by_session ON imports (session_id);
