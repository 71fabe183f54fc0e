-- The session tree: sessions, their append-only entries, the materialized
-- active branch and the current labels. See schema.sql for the design.

CREATE TABLE sessions (
    pk             INTEGER PRIMARY KEY AUTOINCREMENT CHECK (pk < 2147483648),
    id             TEXT    NOT NULL UNIQUE,
    version        INTEGER NOT NULL,
    created_at     TEXT    NOT NULL,
    cwd            TEXT    NOT NULL,
    parent_session TEXT,
    updated_at     TEXT    NOT NULL,
    name           TEXT,
    leaf_pk        INTEGER,
    leaf_id        TEXT,
    leaf_depth     INTEGER NOT NULL DEFAULT 0,
    boundary_depth INTEGER NOT NULL DEFAULT 0,
    entry_count    INTEGER NOT NULL DEFAULT 0,
    message_count  INTEGER NOT NULL DEFAULT 0,
    input_tokens   INTEGER NOT NULL DEFAULT 0,
    output_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost           REAL    NOT NULL DEFAULT 0,
    deleting       INTEGER NOT NULL DEFAULT 0 CHECK (deleting IN (0, 1))
);

CREATE TABLE entries (
    pk          INTEGER PRIMARY KEY,
    session     INTEGER NOT NULL REFERENCES sessions (pk),
    seq         INTEGER NOT NULL,
    id          TEXT    NOT NULL,
    parent_id   TEXT,
    parent_pk   INTEGER,
    type        TEXT    NOT NULL,
    timestamp   TEXT    NOT NULL,
    depth       INTEGER NOT NULL,
    start_depth INTEGER NOT NULL,
    thinking_pk INTEGER,
    model_pk    INTEGER,
    tools_pk    INTEGER,
    target_id   TEXT,
    custom_type TEXT,
    role        TEXT,
    raw         TEXT    NOT NULL,
    UNIQUE (session, id),
    CHECK (seq BETWEEN 1 AND 4294967295 AND pk = session * 4294967296 + seq)
);

CREATE INDEX entries_by_parent ON entries (session, parent_id);

CREATE INDEX entries_by_type ON entries (session, type) WHERE type <> 'message';

CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
BEGIN
    SELECT RAISE(ABORT, 'entries are append-only: UPDATE refused');
END;

CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE pk = OLD.session AND deleting = 1)
BEGIN
    SELECT RAISE(ABORT, 'entries are append-only: DELETE refused outside a session delete');
END;

CREATE TRIGGER sessions_deleting_is_final BEFORE UPDATE OF deleting ON sessions
WHEN OLD.deleting = 1 AND NEW.deleting <> 1
BEGIN
    SELECT RAISE(ABORT, 'a session being deleted cannot be restored');
END;

CREATE TABLE branch (
    session INTEGER NOT NULL REFERENCES sessions (pk),
    depth   INTEGER NOT NULL CHECK (depth >= 1),
    entry   INTEGER NOT NULL,
    PRIMARY KEY (session, depth)
) WITHOUT ROWID;

CREATE TABLE labels (
    session   INTEGER NOT NULL REFERENCES sessions (pk),
    target_id TEXT    NOT NULL,
    label     TEXT    NOT NULL,
    entry     INTEGER NOT NULL,
    PRIMARY KEY (session, target_id)
) WITHOUT ROWID;
