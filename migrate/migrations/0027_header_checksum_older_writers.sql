-- Sessions created by an engine older than migration 25, which writes no
-- header checksum: a process still running (a server, an agent built with
-- an older library) while a newer one migrated the file. Its sessions had
-- no sum, so every newer Check called each of them corrupt ('the header
-- has no checksum') and refused to export it, for good.
--
-- A session inserted without a sum now gets it from its columns as it
-- goes in (an engine from migration 25 on writes the sum with the insert,
-- and the trigger does nothing). header_checksum() is the engine's SQL
-- function (engine/checksum.go): an engine older than migration 25 does
-- not define it, so its insert of a session fails ('no such function')
-- instead of storing a header that reads as damaged; its appends to the
-- sessions it has go on. The sessions older engines created since
-- migration 25 get their sums here.
CREATE TRIGGER sessions_header_unsummed AFTER INSERT ON sessions
WHEN NEW.header_checksum IS NULL
BEGIN
    UPDATE sessions SET header_checksum = header_checksum(NEW.id, NEW.version, NEW.created_at, NEW.cwd, NEW.parent_session)
    WHERE pk = NEW.pk;
END;

UPDATE sessions SET header_checksum = header_checksum(id, version, created_at, cwd, parent_session)
WHERE header_checksum IS NULL;
