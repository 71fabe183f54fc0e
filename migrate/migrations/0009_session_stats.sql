-- pi 1.6.0's /session stats and session list (shared/PI1.md sections 9
-- and 12), kept per session in the append's transaction like the
-- counters before, so that Stats reads one row, never the log.
--
-- sessions gains the message counts by role (user, assistant, toolResult),
-- the assistant messages' tool calls, and usage_buckets, the cost
-- breakdown: a JSON array, in order of first use, of the session's
-- buckets ("provider/model", or "Tools/summaries" for tool results and
-- compaction and branch summaries), each with the seq of the entry that
-- first used it (pi orders buckets of equal cost by first use), its
-- tokens (input + output + cacheRead + cacheWrite) and its cost:
-- [{"bucket":"anthropic/m1","first_seq":7,"tokens":6510,"cost":0.0123}].
-- It is in the row that every append writes anyway, rather than a table
-- of its own, whose page an append with usage would write besides. The
-- rules are sessiontree.StatsOf's; the engine's writes take them from it
-- (engine/breakdown.go writes the column), and engine.Check replays every
-- session through sessiontree.Tally against these columns.
--
-- Existing sessions are recomputed here from their stored JSON, by the
-- same rules written in SQL: the token and cost totals (the rule changed:
-- usage entries and tool-result usage count now), the new counters, the
-- breakdown, and the session list's first user text (pi's rule: a string
-- content, or all text blocks' texts joined by spaces; a user message
-- whose text is empty is skipped). Usage counts when it is an object whose
-- input and output are numbers; token counts are truncated to integers as
-- the engine's reader truncates them. (One difference is left: an object
-- that names a key twice is read by its first value here and by its last
-- in Go. pi writes no such JSON.)
--
-- Costs are floating-point sums, and their last bits depend on the order
-- of the additions: pi adds one record at a time in log order, per
-- session and per bucket, and the engine does the same. SQLite's sum()
-- compensates rounding (since 3.43), which gives other bits, so the costs
-- here are recursive queries that add one record at a time. SQLite's JSON
-- writes a real in digits that read back as the same double, as the
-- engine's Go does.

ALTER TABLE sessions ADD COLUMN user_messages      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN assistant_messages INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN tool_results       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN tool_calls         INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN usage_buckets      TEXT    NOT NULL DEFAULT '[]';

-- The usage records of every log, one row per entry that has one: n
-- numbers them in log order, m by session, bucket and log order.
CREATE TEMP TABLE usage_log (
    n           INTEGER PRIMARY KEY,
    m           INTEGER NOT NULL UNIQUE,
    session     INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    bucket      TEXT    NOT NULL,
    input       INTEGER NOT NULL,
    output      INTEGER NOT NULL,
    cache_read  INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    cost        REAL    NOT NULL
);

-- Each entry's usage object (u, NULL when it has none) and the bucket it
-- counts in: assistant messages under provider/(responseModel, else
-- model), usage entries under provider/model, a missing or empty name
-- printed "undefined" as JavaScript prints it; the rest under
-- Tools/summaries. A number is read as the engine reads it: parsed to a
-- double (adding 0.0), then truncated for token counts.
INSERT INTO usage_log (n, m, session, seq, bucket, input, output, cache_read, cache_write, cost)
SELECT row_number() OVER (ORDER BY pk),
       row_number() OVER (ORDER BY session, bucket, seq),
       session, seq, bucket,
       CAST((u ->> '$.input') + 0.0 AS INTEGER),
       CAST((u ->> '$.output') + 0.0 AS INTEGER),
       CASE WHEN json_type(u, '$.cacheRead') IN ('integer', 'real')
            THEN CAST((u ->> '$.cacheRead') + 0.0 AS INTEGER) ELSE 0 END,
       CASE WHEN json_type(u, '$.cacheWrite') IN ('integer', 'real')
            THEN CAST((u ->> '$.cacheWrite') + 0.0 AS INTEGER) ELSE 0 END,
       CASE WHEN json_type(u, '$.cost.total') IN ('integer', 'real')
            THEN (u ->> '$.cost.total') + 0.0 ELSE 0.0 END
FROM (
    SELECT e.pk, e.session, e.seq,
           CASE e.type WHEN 'message' THEN e.raw -> '$.message.usage' ELSE e.raw -> '$.usage' END AS u,
           CASE
               WHEN e.type = 'message' AND e.role = 'assistant' THEN
                   coalesce(nullif(CASE WHEN json_type(e.raw, '$.message.provider') = 'text'
                                        THEN e.raw ->> '$.message.provider' END, ''), 'undefined')
                   || '/' ||
                   coalesce(nullif(CASE WHEN json_type(e.raw, '$.message.responseModel') = 'text'
                                        THEN e.raw ->> '$.message.responseModel' END, ''),
                            nullif(CASE WHEN json_type(e.raw, '$.message.model') = 'text'
                                        THEN e.raw ->> '$.message.model' END, ''),
                            'undefined')
               WHEN e.type = 'usage' THEN
                   coalesce(nullif(CASE WHEN json_type(e.raw, '$.provider') = 'text'
                                        THEN e.raw ->> '$.provider' END, ''), 'undefined')
                   || '/' ||
                   coalesce(nullif(CASE WHEN json_type(e.raw, '$.model') = 'text'
                                        THEN e.raw ->> '$.model' END, ''), 'undefined')
               ELSE 'Tools/summaries'
           END AS bucket
    FROM entries e
    WHERE e.type = 'message' AND e.role IN ('assistant', 'toolResult')
       OR e.type IN ('usage', 'compaction', 'branch_summary')
)
WHERE json_type(u) = 'object'
  AND json_type(u, '$.input') IN ('integer', 'real')
  AND json_type(u, '$.output') IN ('integer', 'real');

-- Per session: the records added one at a time in log order (the
-- tokens too, although integers would add up in any order).
CREATE TEMP TABLE usage_total (
    session     INTEGER PRIMARY KEY,
    input       INTEGER NOT NULL,
    output      INTEGER NOT NULL,
    cache_read  INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    cost        REAL    NOT NULL
);

INSERT INTO usage_total (session, input, output, cache_read, cache_write, cost)
WITH RECURSIVE run (n, session, input, output, cache_read, cache_write, cost) AS (
    SELECT n, session, input, output, cache_read, cache_write, 0.0 + cost FROM usage_log WHERE n = 1
    UNION ALL
    SELECT u.n, u.session,
           CASE WHEN u.session = r.session THEN r.input + u.input ELSE u.input END,
           CASE WHEN u.session = r.session THEN r.output + u.output ELSE u.output END,
           CASE WHEN u.session = r.session THEN r.cache_read + u.cache_read ELSE u.cache_read END,
           CASE WHEN u.session = r.session THEN r.cache_write + u.cache_write ELSE u.cache_write END,
           CASE WHEN u.session = r.session THEN r.cost + u.cost ELSE 0.0 + u.cost END
    FROM run r JOIN usage_log u ON u.n = r.n + 1
)
-- The bare columns come from the row with max(n): the session's last.
SELECT session, input, output, cache_read, cache_write, cost FROM (
    SELECT session, input, output, cache_read, cache_write, cost, max(n) FROM run GROUP BY session
);

-- Per session and bucket, the same in the order of m; first_seq is the
-- seq of the bucket's first record.
CREATE TEMP TABLE usage_bucket (
    session   INTEGER NOT NULL,
    bucket    TEXT    NOT NULL,
    first_seq INTEGER NOT NULL,
    tokens    INTEGER NOT NULL,
    cost      REAL    NOT NULL,
    PRIMARY KEY (session, bucket)
) WITHOUT ROWID;

INSERT INTO usage_bucket (session, bucket, first_seq, tokens, cost)
WITH RECURSIVE run (m, session, bucket, first_seq, tokens, cost) AS (
    SELECT m, session, bucket, seq, input + output + cache_read + cache_write, 0.0 + cost
    FROM usage_log WHERE m = 1
    UNION ALL
    SELECT u.m, u.session, u.bucket,
           CASE WHEN u.session = r.session AND u.bucket = r.bucket THEN r.first_seq ELSE u.seq END,
           CASE WHEN u.session = r.session AND u.bucket = r.bucket THEN r.tokens ELSE 0 END
               + u.input + u.output + u.cache_read + u.cache_write,
           CASE WHEN u.session = r.session AND u.bucket = r.bucket THEN r.cost + u.cost ELSE 0.0 + u.cost END
    FROM run r JOIN usage_log u ON u.m = r.m + 1
)
SELECT session, bucket, first_seq, tokens, cost FROM (
    SELECT session, bucket, first_seq, tokens, cost, max(m) FROM run GROUP BY session, bucket
);

UPDATE sessions SET
    usage_buckets = (
        SELECT json_group_array(json_object('bucket', b.bucket, 'first_seq', b.first_seq,
                                            'tokens', b.tokens, 'cost', b.cost) ORDER BY b.first_seq)
        FROM usage_bucket b WHERE b.session = sessions.pk),
    (input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost) = (
        SELECT coalesce(max(t.input), 0), coalesce(max(t.output), 0), coalesce(max(t.cache_read), 0),
               coalesce(max(t.cache_write), 0), coalesce(max(t.cost), 0.0)
        FROM usage_total t WHERE t.session = sessions.pk),
    (message_count, user_messages, assistant_messages, tool_results, tool_calls) = (
        SELECT count(*),
               count(*) FILTER (WHERE e.role = 'user'),
               count(*) FILTER (WHERE e.role = 'assistant'),
               count(*) FILTER (WHERE e.role = 'toolResult'),
               -- (A block's type is matched as written, so an entry
               -- whose JSON does not hold "toolCall" has none.)
               coalesce(sum(CASE WHEN e.role = 'assistant' AND instr(e.raw, '"toolCall"') THEN (
                   SELECT count(*) FROM json_each(e.raw, '$.message.content') AS c
                   WHERE json_type(e.raw, '$.message.content') = 'array'
                     AND c.type = 'object' AND c.value ->> '$.type' = 'toolCall') ELSE 0 END), 0)
        FROM entries e
        WHERE e.pk BETWEEN sessions.pk * 4294967296 + 1 AND sessions.pk * 4294967296 + 4294967295
          AND e.type = 'message'),
    first_user_text = (
        SELECT text FROM (
            SELECT e.pk, CASE json_type(e.raw, '$.message.content')
                       WHEN 'text' THEN e.raw ->> '$.message.content'
                       WHEN 'array' THEN (
                           SELECT group_concat(CASE WHEN json_type(b.value, '$.text') = 'text'
                                                    THEN b.value ->> '$.text' ELSE '' END, ' ' ORDER BY b.key)
                           FROM json_each(e.raw, '$.message.content') AS b
                           WHERE b.type = 'object' AND b.value ->> '$.type' = 'text')
                   END AS text
            FROM entries e
            WHERE e.pk BETWEEN sessions.pk * 4294967296 + 1 AND sessions.pk * 4294967296 + 4294967295
              AND e.type = 'message' AND e.role = 'user')
        WHERE text <> ''
        ORDER BY pk LIMIT 1);

DROP TABLE temp.usage_bucket;
DROP TABLE temp.usage_total;
DROP TABLE temp.usage_log;
