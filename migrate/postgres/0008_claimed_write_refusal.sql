-- A write without a claim is refused, when someone holds a live claim on
-- its session, by the statement that writes the session's row back: that
-- statement raises this error (SQLSTATE ST001, the holder in DETAIL, the
-- claim's expiry in Unix milliseconds in HINT), which aborts the
-- transaction, so that a write can send its last statements and its
-- COMMIT at once (pgengine/pipe.go) and still never commit past a claim.
CREATE FUNCTION refuse_claimed_write(holder text, expires_ms bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'session is claimed by %', holder USING ERRCODE = 'ST001', DETAIL = holder, HINT = expires_ms::text;
END $$;
