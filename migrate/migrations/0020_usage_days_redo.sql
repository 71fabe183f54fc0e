-- Recompute the usage_days rows (migration 12) of the sessions whose
-- rows an older engine put on a day sessiontree.UsageDay no longer gives.
--
-- UsageDay reads an entry's time as JavaScript's Date does (ParseTime,
-- commit d757bb1): a time without seconds or zone, a date alone, an offset
-- without colon now have a day where older engines counted their records
-- on the unknown day ''; a day past the month's end ("2026-02-31", which
-- Date carries into March) or 24:00 was briefly kept as written, and a
-- day of a year before 0001 or after 9999 is now unknown too. Such a
-- session's stored rows differ from a replay of its log, so Check reported
-- it corrupt, and the report counted its records on the wrong day (or, on
-- a day that does not exist, failed by week on PostgreSQL).
--
-- Every session with a row on '', on a text that is not a date as
-- SQLite's date() writes it, or on year 0000 (the only days where the
-- readers differ) has
-- its rows computed again from its entries, with the SQL functions and
-- the statement of migration 12 (reading only their entries, a range of
-- keys each: a session's keys are its key shifted by 32 bits plus seq);
-- the others keep theirs, and nothing is read when none is. Like migrations
-- 11 and 12, this one runs only through the engine.
CREATE TEMP TABLE usage_days_redo AS
    SELECT DISTINCT session FROM usage_days WHERE date(day) IS NOT day OR day < '0001';

DELETE FROM usage_days WHERE session IN (SELECT session FROM usage_days_redo);

INSERT INTO usage_days (day, session, bucket, input, output, cache_read, cache_write, cost)
WITH record AS MATERIALIZED (
    SELECT e.pk, e.session, usage_day(e.timestamp) AS day,
           entry_usage(CAST(e.raw AS BLOB)) AS u, entry_usage_cost(CAST(e.raw AS BLOB)) AS cost
    FROM usage_days_redo r
    JOIN entries e ON e.pk BETWEEN r.session * 4294967296 + 1 AND r.session * 4294967296 + 4294967295
    WHERE e.type = 'message' AND e.role IN ('assistant', 'toolResult')
       OR e.type IN ('usage', 'compaction', 'branch_summary')
)
SELECT day, session, u ->> '$.bucket',
       sum(u ->> '$.input'), sum(u ->> '$.output'), sum(u ->> '$.cacheRead'), sum(u ->> '$.cacheWrite'),
       log_sum(cost ORDER BY pk)
FROM record
WHERE u IS NOT NULL
GROUP BY day, session, u ->> '$.bucket';

DROP TABLE usage_days_redo;
