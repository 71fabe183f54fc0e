-- Cheaper appends (issue 15, writers): entries_by_parent no longer holds
-- the entries appended right after their parent, as the SQLite engine's
-- has not since its migration 6.
--
-- The index (session, parent_id) took a row of every entry, at a random
-- place of the index (ids are random): one of the four index insertions
-- of every append. Most entries are the child of the entry appended just
-- before them in the same session (parent_seq = seq - 1); the index now
-- holds only the others, by the parent's seq, so an append on the leaf
-- inserts into three indexes. The children of entry X (seq N) are the
-- entry N + 1 if its parent_seq is N, and the index's rows with
-- parent_seq N: two seeks, as before one (pgengine's ReferencedLeaves).
-- parent_seq has been stored with every entry since migration 1.
DROP INDEX entries_by_parent;

CREATE INDEX entries_by_parent ON entries (session, parent_seq) WHERE parent_seq <> seq - 1;
