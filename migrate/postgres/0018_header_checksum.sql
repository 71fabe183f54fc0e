-- A checksum of each session's header (the sessions row's id, version,
-- created_at, cwd and parent_session, which an export writes as the
-- file's first line; the SQLite engine's migration 25).
--
-- Check verified every entry against its checksum (migration 2), but the
-- header only the sessions row holds, with no copy or sum: a column
-- changed behind the engine's back passed Check, and an export wrote
-- another header than the one imported. header_checksum is
-- sessiontree.HeaderChecksum of the header (CRC-32C, a number from 0 to
-- 2^32-1), written by the insert that creates the session (no append
-- writes it: a header never changes), and Check compares it with the
-- columns.
--
-- The sessions stored before get theirs from their columns as they are:
-- nothing else holds their header. PostgreSQL has no CRC-32C, so
-- header_checksum_fill lists them, and pgengine.Open computes their sums
-- in Go after the migrations, deleting each listed row with the sum it
-- writes, as it does derived_redo's; Open returns once the list is
-- empty, so Check reports a session with no sum: only damage leaves one.
ALTER TABLE sessions ADD COLUMN header_checksum bigint;

CREATE TABLE header_checksum_fill (
    session bigint PRIMARY KEY
);

INSERT INTO header_checksum_fill (session) SELECT pk FROM sessions;
