-- Cheaper appends and reads (engine, issue 4).
--
-- Every append writes one page of each b-tree its row goes into, and under
-- WAL each page is a frame of the log: most of an append's cost.
-- entries_by_parent indexed (session, parent_id) for every entry, at a
-- random place (ids are random), so it cost every append one page. Most
-- entries are the child of the entry appended just before them in the
-- same session (parent_pk = pk - 1): the index now holds only the other
-- entries, by parent key, and an append on the leaf writes no page of it.
-- The children of entry X are the entry X + 1 if its parent_pk is X, and
-- the index's entries with parent_pk X.
DROP INDEX entries_by_parent;

CREATE INDEX entries_by_parent ON entries (parent_pk) WHERE parent_pk <> pk - 1;

-- canonical is 1 when raw begins with "type", "id", "parentId" and
-- "timestamp", in that order, holding exactly what the columns hold (as
-- the engine writes every entry it builds, and as pi writes its files):
-- a reader then takes the four fields from the JSON it reads anyway
-- instead of four more columns, which halves the cost of reading a long
-- path. NULL (older rows, or entries given in another shape) means: read
-- the columns.
ALTER TABLE entries ADD COLUMN canonical INTEGER CHECK (canonical IS NULL OR canonical = 1);
