-- Writer claims and live follow (issue 15).
--
-- Writer claims: an optional, fenced, expiring claim of one
-- writer on a session, as on SQLite (migrate/migrations/0014_claims.sql,
-- engine/claim.go); package pgengine's claim.go reads and writes it.
--
-- One row per session ever claimed. fence only grows: a claim taken over,
-- or taken again after a release, gets fence + 1, so a write made under
-- an older fence is refused by the check every write through a claim
-- runs in its transaction, under the session row's lock. A release keeps
-- the row (and its fence) with holder '' and expires_ms 0; deleting it
-- would let the next claim start at fence 1 again, which a stale writer
-- could still hold.
--
-- expires_ms is Unix milliseconds by the engine's clock (Options.Now),
-- not the server's: a claim is live while it is in the future. Every
-- write through the claim moves it to now + the claim's ttl.
CREATE TABLE claims (
    session    bigint PRIMARY KEY REFERENCES sessions (pk) ON DELETE CASCADE,
    holder     text   NOT NULL,
    fence      bigint NOT NULL CHECK (fence > 0),
    expires_ms bigint NOT NULL
);

-- Follow (pgengine/follow.go): every committed write that adds entries
-- to a session notifies channel sessiontree_appends with the payload
-- '<session pk> <entry count>', the count being the seq of the session's
-- last entry. The notification goes out at commit, and only then, to
-- every connection listening on the database, in this process or on
-- another machine; a rolled-back write sends nothing. Writes change
-- entry_count once per transaction (pgengine's session.save), so a
-- transaction sends one notification per session it wrote.
CREATE FUNCTION sessions_notify_append() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('sessiontree_appends', NEW.pk::text || ' ' || NEW.entry_count::text);
    RETURN NULL;
END $$;

CREATE TRIGGER sessions_notify_append AFTER UPDATE OF entry_count ON sessions
FOR EACH ROW WHEN (NEW.entry_count <> OLD.entry_count) EXECUTE FUNCTION sessions_notify_append();
