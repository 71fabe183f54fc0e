-- A checksum of each entry's stored JSON (issue 13, silent corruption).
--
-- SQLite's checks see pages, not values: one letter changed inside an
-- entry's JSON, or JSON cut short, is a valid row to them, and the engine
-- read such a row as the entry it once was. entries.checksum is the
-- CRC-32C of raw's bytes (engine.EntryChecksum), written with the row by
-- every write; engine.Check verifies every row's, and every read that
-- hands out entries verifies the rows it reads, so damage is a
-- corrupt-session error naming the entry instead of output.
--
-- The rows already stored get theirs here, from entry_checksum(), an SQL
-- function the engine defines on its connections (engine/checksum.go):
-- SQLite has no CRC-32C of its own, so this migration runs only through
-- the engine. A row whose JSON SQLite does not read as JSON is left
-- without one (NULL), which Check and the reads report as corrupt: it was
-- damaged before this migration, and a checksum of the damage would let it
-- pass for an entry. (Every row the engine wrote reads as JSON: it checks
-- an entry's JSON before storing it, and the search index reads the text
-- of every row that has any with SQLite's JSON functions.)
--
-- Filling the column rewrites every row, so the append-only trigger is
-- set aside for it and made again, as it was, in this migration's
-- transaction.
ALTER TABLE entries ADD COLUMN checksum INTEGER CHECK (checksum BETWEEN 0 AND 4294967295);

DROP TRIGGER entries_no_update;

UPDATE entries SET checksum = entry_checksum(CAST(raw AS BLOB)) WHERE json_valid(raw);

CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
BEGIN
    SELECT RAISE(ABORT, 'entries are append-only: UPDATE refused');
END;
