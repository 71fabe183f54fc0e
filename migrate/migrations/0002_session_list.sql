-- What a session list shows without reading entries: the first user
-- message's text (backfilled here for sessions written before), and
-- an index to find a working directory's sessions. The index leaves
-- updated_at out on purpose: every append changes updated_at, and an index
-- on it would cost every append another page write. A directory's
-- sessions are few, and sorting them is cheap; a list of all sessions
-- scans the sessions table, which is small.

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

CREATE INDEX sessions_by_cwd ON sessions (cwd);
