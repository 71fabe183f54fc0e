-- Usage per session, day and bucket (issue 16, `sessiontree usage`), kept
-- by every write in its transaction, so that a report over every session
-- reads these rows and never the entries.
--
-- A row sums the usage records of one session that count on one day in
-- one bucket: exactly the records pi's /session breakdown counts
-- (sessiontree.StatsOf: assistant and tool-result message usage, usage
-- entries, compaction and branch-summary usage; malformed usage skipped),
-- under the same bucket key ("provider/model", or "Tools/summaries").
-- The day is sessiontree.UsageDay of the entry's timestamp: its UTC date,
-- "2026-12-03", or '' for a timestamp that is not RFC 3339. So a
-- session's rows add up to its totals in the sessions row, and its rows
-- of one bucket to that bucket of usage_buckets.
--
-- The costs of a row are added one record at a time in log order, as
-- the engine adds the session's (the last bits of a float sum depend on
-- the order), so engine.Check compares them exactly with a replay.
--
-- The rows of existing sessions are computed here from their stored JSON
-- by SQL functions the engine defines on its connections (engine/usage.go)
-- with the rules of the Go code itself: usage_day(timestamp) is
-- sessiontree.UsageDay, entry_usage(raw) the record of an entry as JSON
-- ({"bucket", "input", "output", "cacheRead", "cacheWrite"}, NULL when it
-- has none), entry_usage_cost(raw) its cost, and log_sum(x ORDER BY ...)
-- adds numbers in the given order without the compensation SQLite's
-- sum() applies. Like migration 11, this one runs only through the
-- engine.
CREATE TABLE usage_days (
    day         TEXT    NOT NULL,
    session     INTEGER NOT NULL REFERENCES sessions (pk),
    bucket      TEXT    NOT NULL,
    input       INTEGER NOT NULL,
    output      INTEGER NOT NULL,
    cache_read  INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    cost        REAL    NOT NULL,
    PRIMARY KEY (day, session, bucket)
) WITHOUT ROWID;

CREATE INDEX usage_days_by_session ON usage_days (session);

INSERT INTO usage_days (day, session, bucket, input, output, cache_read, cache_write, cost)
WITH record AS MATERIALIZED (
    SELECT e.pk, e.session, usage_day(e.timestamp) AS day,
           entry_usage(CAST(e.raw AS BLOB)) AS u, entry_usage_cost(CAST(e.raw AS BLOB)) AS cost
    FROM entries e
    WHERE e.type = 'message' AND e.role IN ('assistant', 'toolResult')
       OR e.type IN ('usage', 'compaction', 'branch_summary')
)
SELECT day, session, u ->> '$.bucket',
       sum(u ->> '$.input'), sum(u ->> '$.output'), sum(u ->> '$.cacheRead'), sum(u ->> '$.cacheWrite'),
       log_sum(cost ORDER BY pk)
FROM record
WHERE u IS NOT NULL
GROUP BY day, session, u ->> '$.bucket';
