-- The engine keeps the tree's counts of migration 15 (branch_count,
-- root_count, compaction_count) itself, in the sessions row update each
-- write makes anyway (engine/shape.go), by the same rules. The trigger
-- that kept them cost 14-17% of a batch import's CPU in its firing alone
-- (BenchmarkBatchImport), for the entries that change no count too.
-- The labels triggers and the entries_roots index stay. (IF EXISTS: a
-- migration runs again when its record is missing.)
DROP TRIGGER IF EXISTS entries_count_shape;
