-- A write to a session nobody follows calls no function for the follow
-- notification (issue 15, writers).
--
-- Migration 6's trigger on the sessions row called a PL/pgSQL function
-- at every write that adds entries, which looked for the session in
-- watchers and notified only when it found it: with nobody watching, the
-- call alone was about half of the row's write-back (pg_stat_statements,
-- one connection: 15-16 µs a write-back with the trigger, 6.9 µs
-- without). The row now says whether its session has a watcher
-- (watched), and the trigger's WHEN clause, which the server evaluates
-- without calling anything, reads it.
--
-- A watch (pgengine/follow.go) registers its backend in watchers and sets
-- watched in one transaction whose update of the row waits for a write
-- in progress and makes later writes wait for the registration's commit,
-- as migration 6's FOR KEY SHARE did: a write either commits before the
-- watch reads the log, or runs its trigger after watched is visible. A
-- watch that closes removes its row and, holding the sessions row,
-- clears watched unless another watcher remains. The function still
-- notifies only when the session has a row in watchers: the flag of a
-- session whose watcher's backend is gone (a crashed follower) stays set
-- until a watch of that session closes, and only costs the call.
ALTER TABLE sessions ADD COLUMN watched boolean NOT NULL DEFAULT false;
UPDATE sessions SET watched = true WHERE pk IN (SELECT session FROM watchers);

DROP TRIGGER sessions_notify_append ON sessions;
CREATE TRIGGER sessions_notify_append AFTER UPDATE OF entry_count ON sessions
FOR EACH ROW WHEN (NEW.watched AND NEW.entry_count <> OLD.entry_count) EXECUTE FUNCTION sessions_notify_append();
