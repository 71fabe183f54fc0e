-- The schema fence: from this migration on, a program older than the
-- database's schema may not write to it.
--
-- Open refuses a newer schema, but a process of the fleet that opened the
-- database before a newer one migrated it (a server, an agent on a
-- machine the upgrade has not reached) kept its connections and wrote by
-- its own rules: one from before migrations 14 to 17 kept usage on the
-- day an older rule gave, names and labels by older rules; each newer
-- Check called those sessions corrupt, for good, and info and the usage
-- report answered wrong until then.
--
-- Every write of a session's derived values writes its sessions row (an
-- append its counters, the search index's catch-up indexed_count, a
-- delete the row itself), so a trigger there refuses any statement that
-- inserts, updates or deletes sessions rows, and with it the
-- transaction, unless the connection says it is a program's that knows
-- this schema: pgengine sets sessiontree.schema, a setting of the
-- session, to the latest migration it knows on every connection it opens
-- (pgengine/fence.go); an engine from before this migration sets none.
-- Its write fails with SQLSTATE ST003 and a message saying to upgrade,
-- before anything is stored; its reads go on. Once per statement, not
-- per row: about 2 us of the server's time (an UPDATE of one sessions
-- row, 5,000 in a loop, 10 rounds: median 12.7 us with the trigger, 10.5
-- without; a WHEN on the trigger in place of the IF cost more, 17.4, its
-- expression prepared again for every statement). A later migration that
-- changes a rule by which the engine derives values moves the fence: it
-- creates the trigger again with its own version.
CREATE FUNCTION schema_fence() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    known text := current_setting('sessiontree.schema', true);
BEGIN
    IF known IS NULL OR known !~ '^[0-9]{1,9}$' OR known::integer < TG_ARGV[0]::integer THEN
        RAISE EXCEPTION 'the database has schema %, newer than this program (%): upgrade sessiontree to write to it',
            TG_ARGV[0], coalesce('schema ' || nullif(known, ''), 'older than schema 20')
            USING ERRCODE = 'ST003';
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER sessions_schema_fence BEFORE INSERT OR UPDATE OR DELETE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION schema_fence('20');

-- What an older process wrote before the fence, by rules since changed,
-- is computed again: the sessions migrations 14, 16 and 17 listed for
-- Open to compute again (those where the older and the newer rule can
-- differ: usage by day of times an older rule read otherwise, names with
-- U+FEFF or U+0085, labels not written as one compact string, breakdown
-- keys and numbers read otherwise) are listed again, since such a process
-- may have written more of them after those migrations ran; Open
-- computes them again (pgengine/redo.go) before it returns, and Check,
-- which called them corrupt, passes them. After the trigger above, in
-- this transaction: its lock waits for the writes under way, and no older
-- write comes in after this reads the tables.
INSERT INTO derived_redo (session)
SELECT session FROM usage_days
WHERE CASE WHEN day !~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' OR left(day, 4) = '0000' THEN true
      ELSE to_char((left(day, 8) || '01')::date + (right(day, 2)::int - 1), 'YYYY-MM-DD') <> day END
UNION
SELECT session FROM entries
WHERE timestamp ~ '^[^T]*T[0-9]:|,|[+-](24:?[0-9][0-9]|[0-9][0-9]:?60)$'
   OR timestamp ~ '^(\+00)?00[0-9][0-9][^ ]* |^-000000|24:00:00\.000'
UNION
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
