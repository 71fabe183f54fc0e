-- The sessions with an entry timed in a form ParseTime now reads as V8's
-- Date does and older engines read otherwise, to be computed again
-- (pgengine.Open does it, as for migrations 14 and 16; the SQLite
-- engine's migration 23 says more): a year below 100 before a
-- space-parted time ("0050-12-01 10:00Z" is 1950 in Date), the year
-- -000000 (NaN in Date), 24:00 with a fraction whose first three digits
-- are 0 and another is not (NaN in Date, the next day to older engines). UsageDay gives those
-- records another day now, so Check reported the sessions corrupt. A
-- session listed that needed nothing gets the same values back.
INSERT INTO derived_redo (session)
SELECT DISTINCT session FROM entries
WHERE timestamp ~ '^(\+00)?00[0-9][0-9][^ ]* |^-000000|24:00:00\.000'
ON CONFLICT (session) DO NOTHING;
