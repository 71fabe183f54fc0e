-- Recompute, as migrations 20 and 21 do, the usage_days rows of the
-- sessions with an entry timed in a form ParseTime now reads as V8's Date
-- does (FuzzParseTime held it to node) and older engines read otherwise:
--   * a year below 100 before a space-parted time ("0050-12-01 10:00Z"),
--     which V8's legacy parser reads as a two-digit year (1950), or,
--     below 32, as a month or day (ParseTime refuses it); older engines
--     counted it on year 50 or 10;
--   * the year -000000, which Date refuses and older engines read as 0
--     (a negative offset carried it into the year 0001);
--   * 24:00 with a fraction whose first three digits are 0 and another
--     is not ("24:00:00.0001Z"), which Date refuses and older engines,
--     which read the first three digits, took for the next day.
-- UsageDay gives those records another day now, so Check reported the
-- sessions corrupt. Finding them reads the entries' timestamp column
-- once (no JSON); a session listed that needed nothing gets the same rows
-- back. Like migrations 11, 12, 20 and 21, this one runs only through the
-- engine.
CREATE TEMP TABLE usage_days_redo AS
    SELECT DISTINCT session FROM entries
    WHERE timestamp GLOB '00[0-9][0-9]* *' OR timestamp GLOB '+0000[0-9][0-9]* *' OR timestamp GLOB '-000000*'
       OR timestamp GLOB '*24:00:00.000*';

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
