-- The session store (package store, issue 5): free-form metadata per
-- session, and what the import of pi's session files remembers about
-- each file so that importing it again does only what is new.

ALTER TABLE sessions ADD COLUMN metadata TEXT CHECK (metadata IS NULL OR json_valid(metadata));

-- One row per imported file, by absolute path. The file's first
-- imported_bytes bytes were imported into session_id; prefix_sha256 is
-- their SHA-256, so a file whose imported part changed is told from one
-- that only grew. position is the JSONL reader's resume point (JSON of
-- jsonl.Position) after the last imported line; session_entries is the
-- session's entry count right after the import, so entries appended to
-- the session since are noticed before the file's new lines are merged.
CREATE TABLE imports (
    path            TEXT    PRIMARY KEY,
    session_id      TEXT    NOT NULL,
    size            INTEGER NOT NULL,
    mtime_ns        INTEGER NOT NULL,
    imported_bytes  INTEGER NOT NULL,
    prefix_sha256   TEXT    NOT NULL,
    position        TEXT    NOT NULL CHECK (json_valid(position)),
    session_entries INTEGER NOT NULL,
    imported_at     TEXT    NOT NULL
) WITHOUT ROWID;

CREATE INDEX imports_by_session ON imports (session_id);

-- Deleting a session forgets where it came from, so importing its file
-- again brings it back.
CREATE TRIGGER sessions_forget_imports AFTER DELETE ON sessions
BEGIN
    DELETE FROM imports WHERE session_id = OLD.id;
END;
