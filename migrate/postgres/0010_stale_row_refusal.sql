-- A pipelined append (pgengine/rowcache.go) may build its entry from the
-- sessions row its Storage kept after its last write, before it locks the
-- row, and send the lock, the insert, the row's write-back and the COMMIT
-- in one batch. The lock statement then checks that the locked row is
-- still the version kept (its xmin and entry count) and, when it is not
-- or the row is missing, calls this function, whose error (SQLSTATE
-- ST002) aborts the transaction before anything of the batch is written;
-- the append is then run again the two-round-trip way, which reads the
-- row under its lock. (A row another transaction holds is not waited
-- for: the lock's NOWAIT aborts the batch the same way, 55P03.)
CREATE FUNCTION refuse_stale_row(session bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'session % was written since its row was kept', session USING ERRCODE = 'ST002';
END $$;
