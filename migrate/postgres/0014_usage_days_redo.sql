-- The sessions whose usage_days rows (migration 2) an older engine put
-- on a day sessiontree.UsageDay no longer gives, to be computed again:
-- pgengine.Open does it after the migrations, in Go (UsageDay is Go),
-- one session per transaction, deleting its row here with it, so that
-- an interrupted run goes on at the next Open (the SQLite engine's
-- migration 20, which can do it in SQL).
--
-- UsageDay reads an entry's time as JavaScript's Date does (ParseTime,
-- commit d757bb1); older engines read it with Go's RFC 3339 parser. They
-- differ on two kinds of times:
--   * times Date reads and Go did not (no seconds, a date alone, an
--     offset without colon, no zone, 24:00, a day Date carries into the
--     next month) counted on the unknown day '' (or, briefly, on the day
--     as written, 2026-02-31); years 0000 and past 9999 on a day the
--     report cannot order. These are found by the stored day alone:
--     '' or a text that is not a date of years 0001 to 9999.
--   * times Go read and Date does not (a comma before the fraction, a
--     one-digit hour, an offset of 24 hours or 60 minutes) counted on a
--     real day, where UsageDay now gives ''. The stored day cannot tell
--     these: the entries' timestamps are read for them, once, in the
--     server (a read of the timestamp column, no JSON leaves it).
-- A session listed that needed nothing gets the same rows back.
CREATE TABLE usage_days_redo (
    session bigint PRIMARY KEY
);

INSERT INTO usage_days_redo (session)
SELECT session FROM usage_days
WHERE CASE WHEN day !~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' OR left(day, 4) = '0000' THEN true
      ELSE to_char((left(day, 8) || '01')::date + (right(day, 2)::int - 1), 'YYYY-MM-DD') <> day END
UNION
SELECT session FROM entries
WHERE timestamp ~ '^[^T]*T[0-9]:|,|[+-](24:?[0-9][0-9]|[0-9][0-9]:?60)$';
