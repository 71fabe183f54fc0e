-- Compute again what older engines derived from entries by rules that
-- have since been fixed to agree with pi 1.6.0, for the sessions where
-- the old and the new rule can differ; the others keep what they have.
-- Such a session's stored values differ from a replay of its log, so
-- Check reported it corrupt, and info, ls and the usage report answered
-- otherwise than a fresh import of the same file.
--
--   * Names (sessions.name): pi trims a name with JavaScript's trim,
--     which removes U+FEFF and keeps U+0085 where Go's TrimSpace, the
--     older rule, did the opposite. Sessions with a session_info entry
--     holding either, as a character or a \u escape, get the name of
--     their last session_info again (entry_name: sessiontree.NameOf).
--   * Labels (the labels table, and label_count through its triggers):
--     a label that is not a string (5, true, an object) clears the label
--     by the older rule and is kept as pi's tree shows it ("5") by the
--     new. Sessions with a label entry whose JSON is not one
--     "label":"...", compact, or holds a \u escape (a key may be spelled
--     with one), get their labels again: per target the
--     last label entry written after its target (sessiontree.CheckTarget),
--     none when its label (entry_label: sessiontree.LabelOf) is empty.
--   * Usage (usage_days, the sessions row's usage totals and
--     usage_buckets): the breakdown key is pi's `${provider}/${model}`,
--     where the older rule read "", null and any value that is not a
--     string as "undefined" and let a responseModel "" or 5 give way to
--     the model; and a token count or cost beyond +-2^30 is malformed
--     (the record skipped, or the number taken as 0), where older engines
--     added it (wrapping past 2^63). Sessions with a row whose bucket has
--     an "undefined" part or a number beyond +-2^30 (read in usage_days,
--     no entry), whose breakdown (the sessions row's usage_buckets,
--     which migration 9 computed by the older rule in SQL, where
--     migration 12 computed usage_days by the new one) has one, or with an assistant message whose responseModel is not
--     one compact string that is not empty (instr and GLOB on the JSON
--     of assistant messages), get their usage again from their entries,
--     with migration 12's functions, as the writes add it: one row per
--     day and bucket, the costs summed one record at a time in log order.
--
-- Only the listed sessions' entries are read, a range of keys each, and
-- the label and session_info entries through entries_by_type. Like
-- migrations 11, 12, 18, 20 and 21, this one runs only through the
-- engine, whose connections have the functions it calls.

-- Names.
CREATE TEMP TABLE names_redo AS
    SELECT DISTINCT e.session FROM sessions s
    JOIN entries e ON e.session = s.pk AND e.type = 'session_info' AND e.type <> 'message'
    WHERE instr(e.raw, char(65279)) OR instr(e.raw, char(133))
       OR e.raw LIKE '%\ufeff%' OR e.raw LIKE '%\u0085%';

UPDATE sessions SET name = (
    SELECT nullif(entry_name(CAST(e.raw AS BLOB)), '') FROM entries e
    WHERE e.session = sessions.pk AND e.type = 'session_info' AND e.type <> 'message'
    ORDER BY e.pk DESC LIMIT 1)
WHERE pk IN (SELECT session FROM names_redo);

DROP TABLE names_redo;

-- Labels.
CREATE TEMP TABLE labels_redo AS
    SELECT DISTINCT e.session FROM sessions s
    JOIN entries e ON e.session = s.pk AND e.type = 'label' AND e.type <> 'message'
    WHERE NOT e.raw GLOB '*"label":"*' OR e.raw GLOB '*"label":*"label":*' OR instr(e.raw, '\u');

DELETE FROM labels WHERE session IN (SELECT session FROM labels_redo);

INSERT INTO labels (session, target_id, label, entry)
SELECT session, target, label, pk FROM (
    SELECT e.session, coalesce(e.target_id, '') AS target, e.pk,
           entry_label(CAST(e.raw AS BLOB)) AS label,
           row_number() OVER (PARTITION BY e.session, coalesce(e.target_id, '') ORDER BY e.pk DESC) AS n
    FROM labels_redo r
    JOIN entries e ON e.session = r.session AND e.type = 'label' AND e.type <> 'message'
    WHERE e.target_id IS NULL
       OR EXISTS (SELECT 1 FROM entries t WHERE t.session = e.session AND t.id = e.target_id AND t.pk < e.pk)
)
WHERE n = 1 AND label <> '';

DROP TABLE labels_redo;

-- Usage.
CREATE TEMP TABLE usage_redo AS
    SELECT session FROM usage_days
    WHERE bucket GLOB 'undefined/*' OR bucket GLOB '*/undefined'
       OR input NOT BETWEEN -1073741824 AND 1073741824 OR output NOT BETWEEN -1073741824 AND 1073741824
       OR cache_read NOT BETWEEN -1073741824 AND 1073741824
       OR cache_write NOT BETWEEN -1073741824 AND 1073741824
       OR cost NOT BETWEEN -1073741824.0 AND 1073741824.0
    UNION
    SELECT session FROM entries
    WHERE type = 'message' AND role = 'assistant' AND instr(raw, '"responseModel"')
      AND (NOT raw GLOB '*"responseModel":"[^"]*' OR raw GLOB '*"responseModel"*"responseModel"*')
    UNION
    SELECT pk FROM sessions WHERE instr(usage_buckets, 'undefined');

CREATE TEMP TABLE usage_record AS
SELECT pk, seq, session, day, u ->> '$.bucket' AS bucket, u ->> '$.input' AS input, u ->> '$.output' AS output,
       u ->> '$.cacheRead' AS cache_read, u ->> '$.cacheWrite' AS cache_write, cost
FROM (
    SELECT e.pk, e.seq, e.session, usage_day(e.timestamp) AS day,
           entry_usage(CAST(e.raw AS BLOB)) AS u, entry_usage_cost(CAST(e.raw AS BLOB)) AS cost
    FROM usage_redo r
    JOIN entries e ON e.pk BETWEEN r.session * 4294967296 + 1 AND r.session * 4294967296 + 4294967295
    WHERE e.type = 'message' AND e.role IN ('assistant', 'toolResult')
       OR e.type IN ('usage', 'compaction', 'branch_summary')
)
WHERE u IS NOT NULL;

DELETE FROM usage_days WHERE session IN (SELECT session FROM usage_redo);

INSERT INTO usage_days (day, session, bucket, input, output, cache_read, cache_write, cost)
SELECT day, session, bucket, sum(input), sum(output), sum(cache_read), sum(cache_write), log_sum(cost ORDER BY pk)
FROM usage_record
GROUP BY day, session, bucket;

UPDATE sessions SET
    (input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost) = (
        SELECT coalesce(sum(input), 0), coalesce(sum(output), 0), coalesce(sum(cache_read), 0),
               coalesce(sum(cache_write), 0), coalesce(log_sum(cost ORDER BY pk), 0.0)
        FROM usage_record WHERE session = sessions.pk),
    usage_buckets = coalesce((
        SELECT json_group_array(json_object('bucket', bucket, 'first_seq', first_seq, 'tokens', tokens, 'cost', cost)
                                ORDER BY first_seq)
        FROM (SELECT bucket, min(seq) AS first_seq, sum(input + output + cache_read + cache_write) AS tokens,
                     log_sum(cost ORDER BY pk) AS cost
              FROM usage_record WHERE session = sessions.pk GROUP BY bucket)), '[]')
WHERE pk IN (SELECT session FROM usage_redo);

DROP TABLE usage_record;
DROP TABLE usage_redo;
