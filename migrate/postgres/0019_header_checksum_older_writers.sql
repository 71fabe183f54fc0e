-- Sessions created by an engine older than migration 18, which writes no
-- header checksum: a process of a fleet not yet upgraded, still connected
-- (or started before the upgrade reached its machine) while newer ones
-- migrated the database. Its sessions had no sum and were listed nowhere,
-- so every newer process's Check called each of them corrupt ('the header
-- has no checksum') and refused to export it, for good.
--
-- Such a session is now listed in header_checksum_fill as its row goes in
-- (an engine from migration 18 on writes the sum with the insert, and the
-- trigger does nothing), and the next pgengine.Open computes its sum, as
-- it did those of the sessions stored before migration 18. Until then it
-- is a header not yet summed, not damage: Check passes it and an export
-- writes it from its columns, as before migration 18. The sessions older
-- engines created since migration 18 are listed here too. A session
-- without a sum that is not listed is still damage.
CREATE FUNCTION list_unsummed_header() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO header_checksum_fill (session) VALUES (NEW.pk) ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

CREATE TRIGGER sessions_header_unsummed AFTER INSERT ON sessions
    FOR EACH ROW WHEN (NEW.header_checksum IS NULL) EXECUTE FUNCTION list_unsummed_header();

INSERT INTO header_checksum_fill (session)
    SELECT pk FROM sessions WHERE header_checksum IS NULL ON CONFLICT DO NOTHING;
