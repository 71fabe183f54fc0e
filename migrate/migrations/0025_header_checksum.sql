-- A checksum of each session's header (the sessions row's id, version,
-- created_at, cwd and parent_session, which an export writes as the
-- file's first line).
--
-- Check verified every entry against its checksum (migration 11), but
-- the header only the sessions row holds, with no copy or sum: a column
-- changed behind the engine's back passed Check, and an export wrote
-- another header than the one imported. header_checksum is
-- sessiontree.HeaderChecksum of the header, written by the insert that
-- creates the session (no append writes it: a header never changes), and
-- Check compares it with the columns.
--
-- The sessions stored before get theirs here, from their columns as they
-- are: nothing else holds their header (an import keeps no copy of the
-- file's first line). header_checksum() is an SQL function the engine
-- defines on its connections (engine/checksum.go), so, like migrations
-- 11, 12, 20 to 24, this one runs only through the engine.
ALTER TABLE sessions ADD COLUMN header_checksum INTEGER CHECK (header_checksum BETWEEN 0 AND 4294967295);

UPDATE sessions SET header_checksum = header_checksum(id, version, created_at, cwd, parent_session);
