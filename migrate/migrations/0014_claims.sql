-- Writer claims (issue 15): an optional, fenced, expiring claim of one
-- writer on a session, as pi's own SQLite storage keeps (engine/claim.go).
--
-- One row per session ever claimed. fence only grows: a claim taken over,
-- or taken again after a release, gets fence + 1, so a write made under
-- an older fence is refused by the check every write through a claim
-- runs in its transaction. A release keeps the row (and its fence) with
-- holder '' and expires_ms 0; deleting it would let the next claim start
-- at fence 1 again, which a stale writer could still hold.
--
-- expires_ms is Unix milliseconds by the engine's clock (Options.Now); a
-- claim is live while it is in the future. Every write through the claim
-- moves it to now + the claim's ttl.
CREATE TABLE claims (
    session    INTEGER PRIMARY KEY REFERENCES sessions (pk) ON DELETE CASCADE,
    holder     TEXT    NOT NULL,
    fence      INTEGER NOT NULL CHECK (fence > 0),
    expires_ms INTEGER NOT NULL
);
