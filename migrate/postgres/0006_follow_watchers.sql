-- Follow notifies only sessions someone follows (issue 15, writers).
--
-- pg_notify makes the committing transaction take one lock for the whole
-- cluster (the notification queue's, an AccessExclusiveLock on object 0
-- of pg_database) from just before its commit until the end: every write
-- that notified queued there, whatever its session. With 16 writers on 16
-- sessions, pg_locks showed nearly every waiting backend waiting on that
-- lock, and 16 writers appended no faster than one.
--
-- A watch (pgengine/follow.go) now registers its listening connection's
-- backend here for its session before it reads the log, and the trigger
-- notifies only when the session has a watcher. The registration takes
-- the sessions row FOR KEY SHARE in its transaction, which waits for a
-- write holding the row (every write locks it FOR UPDATE until its
-- commit) and makes later writes wait for the registration's commit: a
-- write either commits before the watch reads the log, or runs its
-- trigger after the registration is visible, so nothing is missed. A
-- watch removes its row when it closes; rows of backends that are gone
-- (a crashed follower) are removed by the next watch, and until then
-- only cost a notification nobody reads.
CREATE UNLOGGED TABLE watchers (
    session bigint  NOT NULL,
    backend integer NOT NULL,
    PRIMARY KEY (session, backend)
);

CREATE OR REPLACE FUNCTION sessions_notify_append() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM watchers WHERE session = NEW.pk) THEN
        PERFORM pg_notify('sessiontree_appends', NEW.pk::text || ' ' || NEW.entry_count::text);
    END IF;
    RETURN NULL;
END $$;
