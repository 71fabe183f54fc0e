-- What a session list shows without reading entries: the first user
-- message's text (backfilled here for sessions written before), and
-- an index to list a working directory's sessions by recency. A list of
-- all sessions by recency scans the sessions table, which is small; a
-- second index on updated_at would cost every append another page write.

ALTER TABLE sessions ADD COLUMN first_user_text TEXT;

UPDATE sessions SET first_user_text = (
    SELECT t.text FROM (
        SELECT e.seq,
               CASE json_type(e.raw, '$.message.content')
                   WHEN 'text' THEN json_extract(e.raw, '$.message.content')
                   WHEN 'array' THEN (
                       SELECT json_extract(b.value, '$.text')
                       FROM json_each(e.raw, '$.message.content') AS b
                       WHERE json_extract(b.value, '$.type') = 'text'
                         AND json_type(b.value, '$.text') = 'text'
                       ORDER BY b.key LIMIT 1)
               END AS text
        FROM entries e
        WHERE e.session = sessions.pk AND e.type = 'message' AND e.role = 'user'
    ) AS t
    WHERE t.text IS NOT NULL
    ORDER BY t.seq LIMIT 1
);

CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at);
