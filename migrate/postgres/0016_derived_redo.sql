-- The sessions whose derived values an older engine computed by rules
-- that have since been fixed to agree with pi 1.6.0, to be computed
-- again: pgengine.Open does it after the migrations, in Go, by the
-- root package's rules, as it does migration 14's (whose list this one
-- renames and extends: derived_redo lists the sessions whose name,
-- labels, stats and usage_days rows Open computes again from their log,
-- one session per transaction, deleting its row with it; the SQLite
-- engine's migration 22 does the same in SQL). Such a session's stored
-- values differ from a replay of its log, so Check reported it corrupt,
-- and info, ls and the usage report answered otherwise than a fresh
-- import of the same file. The sessions listed are those where the old
-- and the new rule can differ:
--   * names trimmed by Go's TrimSpace, which keeps U+FEFF and trims
--     U+0085 where pi's (JavaScript's) trim does the opposite: sessions
--     with a session_info entry holding either, as a character or a \u
--     escape;
--   * labels that are not strings (5, true, an object), which cleared
--     the label where pi keeps it as its tree shows it ("5"): sessions
--     with a label entry whose JSON is not one compact "label":"...",
--     or holds a \u escape (a key may be spelled with one);
--   * breakdown keys, where "", null and values that are not strings
--     read "undefined" (pi writes `${provider}/${model}`: "", "null",
--     "5") and a responseModel "" or 5 gave way to the model, and token
--     counts or costs beyond +-2^30, which are malformed now and were
--     counted: sessions with a usage_days row whose bucket has an
--     "undefined" part or a number beyond +-2^30 (no entry read), or
--     whose breakdown (the sessions row's usage_buckets) has one, or
--     with a message whose responseModel is not one compact string that
--     is not empty (a read of the messages' JSON, in the server).
-- A session listed that needed nothing gets the same values back.
ALTER TABLE usage_days_redo RENAME TO derived_redo;

INSERT INTO derived_redo (session)
SELECT session FROM entries
WHERE type = 'session_info'
  AND (strpos(raw, U&'\FEFF') > 0 OR strpos(raw, U&'\0085') > 0 OR raw ~* '\\u(feff|0085)')
UNION
SELECT session FROM entries
WHERE type = 'label' AND (raw !~ '"label":"' OR raw ~ '"label":.*"label":' OR strpos(raw, '\u') > 0)
UNION
SELECT session FROM usage_days
WHERE bucket LIKE 'undefined/%' OR bucket LIKE '%/undefined'
   OR input NOT BETWEEN -1073741824 AND 1073741824 OR output NOT BETWEEN -1073741824 AND 1073741824
   OR cache_read NOT BETWEEN -1073741824 AND 1073741824 OR cache_write NOT BETWEEN -1073741824 AND 1073741824
   OR cost NOT BETWEEN -1073741824 AND 1073741824
UNION
SELECT pk FROM sessions WHERE strpos(usage_buckets, 'undefined') > 0
UNION
SELECT session FROM entries
WHERE type = 'message' AND strpos(raw, '"responseModel"') > 0
  AND (raw !~ '"responseModel":"[^"]' OR raw ~ '"responseModel".*"responseModel"')
ON CONFLICT (session) DO NOTHING;
