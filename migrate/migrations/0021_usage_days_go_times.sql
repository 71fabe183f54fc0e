-- Recompute, as migration 20 does, the usage_days rows of the sessions
-- with an entry timed in a form Go's RFC 3339 parser read and JavaScript's
-- Date does not: a comma before the fraction ("10:00:00,5Z"), a one-digit
-- hour ("T1:00:00Z"), an offset of 24 hours or of 60 minutes ("+24:00",
-- "+05:60"). Older engines counted such a record on its date; UsageDay now
-- gives the unknown day '', as pi (new Date) reads no time there. Their
-- stored day is a real date, which migration 20, looking at the stored
-- day, leaves alone, so Check reported those sessions corrupt. Finding
-- them reads the entries' timestamp column once (no JSON); a session
-- listed that needed nothing gets the same rows back. Like migrations 11,
-- 12 and 20, this one runs only through the engine.
CREATE TEMP TABLE usage_days_redo AS
    SELECT DISTINCT session FROM entries
    WHERE timestamp GLOB '*,*' OR timestamp GLOB '*T[0-9]:*'
       OR timestamp GLOB '*[+-]24:[0-9][0-9]' OR timestamp GLOB '*[+-][0-9][0-9]:60';

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
