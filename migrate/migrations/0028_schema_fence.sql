-- The schema fence: from this migration on, a program older than the
-- database's schema may not write to it.
--
-- The schema version is checked when a program opens the database
-- (ErrNewer), but a program that opened it before a newer one migrated
-- it (a server or an agent still running while its user installs a newer
-- binary) kept writing by its own rules: an engine from before migration
-- 19 left the tree's counts of every session it appended to wrong (the
-- trigger that kept them was gone), one from before 20 to 24 kept usage
-- on the day an older rule gave, one from before 22 names and labels by
-- older rules; each newer Check called those sessions corrupt, for good,
-- and info and the usage report answered wrong until then.
--
-- Every write of a session's derived values writes its sessions row (an
-- append its counters, the search index's catch-up indexed_count, a
-- label its label_count, a delete the row itself), so these triggers
-- refuse any insert, update or delete of a sessions row, and with it the
-- transaction, unless the connection is a program's that knows this
-- schema: sessiontree_upgrade_needed(N) is an SQL function the engine
-- defines on its connections (engine/fence.go), 0 when the engine knows
-- schema N, 1 when it is older. An engine from before this migration
-- does not define it, so its writes fail ('no such function:
-- sessiontree_upgrade_needed') before anything is stored; its reads go on.
-- A later migration that changes a rule by which the engine derives
-- values moves the fence: it creates these triggers again with its own
-- version, and engines older than it fail with the RAISE's message
-- (the engine reads the schema version then, and returns ErrNewer).
CREATE TRIGGER sessions_fence_insert BEFORE INSERT ON sessions
WHEN sessiontree_upgrade_needed(28)
BEGIN
    SELECT RAISE(ABORT, 'the database has schema 28, newer than this program: upgrade sessiontree to write to it');
END;

CREATE TRIGGER sessions_fence_update BEFORE UPDATE ON sessions
WHEN sessiontree_upgrade_needed(28)
BEGIN
    SELECT RAISE(ABORT, 'the database has schema 28, newer than this program: upgrade sessiontree to write to it');
END;

CREATE TRIGGER sessions_fence_delete BEFORE DELETE ON sessions
WHEN sessiontree_upgrade_needed(28)
BEGIN
    SELECT RAISE(ABORT, 'the database has schema 28, newer than this program: upgrade sessiontree to write to it');
END;
