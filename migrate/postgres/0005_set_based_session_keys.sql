-- Entries and branch rows name their session with a check per statement
-- instead of a foreign key (issue 15, import speed).
--
-- A foreign key checks each inserted row with a query of its own (a
-- per-row trigger locking the sessions row FOR KEY SHARE): a batch of
-- 10,000 entries ran 20,000 of them, one for its entry and one for its
-- branch row, about a third of the batch's time on the server (inserting
-- 10,000 branch rows: 68 ms with the key, 20 ms without). The same rule
-- is kept set-based: one statement-level trigger per table checks all
-- the rows a statement added at once, and deleting a sessions row that
-- still owns entries or branch rows is refused, as the keys refused it.
-- The sessions row itself is locked by every write (FOR UPDATE, before
-- it inserts), so the key's lock added nothing.

ALTER TABLE entries DROP CONSTRAINT entries_session_fkey;
ALTER TABLE branch DROP CONSTRAINT branch_session_fkey;

CREATE FUNCTION rows_need_their_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM added a WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.pk = a.session)) THEN
        RAISE EXCEPTION '% row of a session that does not exist', TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER entries_need_session AFTER INSERT ON entries
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION rows_need_their_session();

CREATE TRIGGER branch_need_session AFTER INSERT ON branch
REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION rows_need_their_session();

CREATE FUNCTION sessions_delete_owns_nothing() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM entries WHERE session = OLD.pk) OR EXISTS (SELECT 1 FROM branch WHERE session = OLD.pk) THEN
        RAISE EXCEPTION 'session % still has entries or branch rows', OLD.id USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN OLD;
END $$;

CREATE TRIGGER sessions_delete_owns_nothing BEFORE DELETE ON sessions
FOR EACH ROW EXECUTE FUNCTION sessions_delete_owns_nothing();
