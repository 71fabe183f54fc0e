-- schema.sql: the schema of a freshly migrated sessiontree database,
-- exactly (engine/schema_test.go fails when it and the migrations in
-- migrate/migrations differ). Change the schema by adding a migration,
-- then update this file. Running this file on an empty database gives
-- the same schema.
--
-- The model (shared/DESIGN.md): a session is a tree of entries stored as
-- an append-only log. Each entry has an id and a parent id; a leaf pointer
-- says where the next entry goes; moving it starts a new branch, and old
-- branches stay. The engine answers from this schema without ever loading
-- a whole session:
--
--   * session list, leaf, name, stats: one sessions row;
--   * active path and context: one range scan of branch;
--   * path from an entry off the active branch: a recursive query over
--     entries.parent_id that applies the compaction rule as it walks and is
--     bounded by the session's entry count (a longer walk is a cycle);
--   * state (thinking level, model, tools) at any entry: the entry's three
--     pointers, a constant number of rows;
--   * append: one entries row, one branch row, the sessions row, in one
--     BEGIN IMMEDIATE transaction that reads the leaf inside it.

PRAGMA application_id = 1937011301; -- 0x73747265, "stre": Open refuses other files
PRAGMA user_version = 2;            -- the latest migration, mirrored in the header

-- Applied migrations, written by package migrate: one row per file, with a
-- SHA-256 of its text so an edited migration is noticed.
CREATE TABLE schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    checksum   TEXT NOT NULL,
    applied_at TEXT NOT NULL
);

-- One row per session: the header of pi's file (id, version, created_at,
-- cwd, parent_session) and everything that changes with each append,
-- kept in the append's transaction so reading it costs one row:
--   leaf_pk/leaf_id   the current leaf (NULL: before the first entry);
--   leaf_depth        its depth, the number of branch rows;
--   boundary_depth    where the active path starts (the compaction
--                     boundary): the active path is branch rows
--                     boundary_depth..leaf_depth;
--   entry_count ...   the counters and usage totals of Stats;
--   name              the latest session_info name;
--   updated_at        the newest entry's timestamp;
--   first_user_text   what a session list shows (migration 2);
--   deleting          set by DeleteSession, the one state in which the
--                     session's entries may be deleted.
-- pk is below 2^31 because entry keys are pk * 2^32 + seq. AUTOINCREMENT
-- keeps a deleted session's pk from being reused.
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
    deleting       INTEGER NOT NULL DEFAULT 0 CHECK (deleting IN (0, 1)),
    first_user_text TEXT
);

-- A working directory's sessions (issue 5's list). updated_at is left out
-- on purpose: every append changes it, and an index on it would cost each
-- append one more page written to the log. A directory holds few
-- sessions, so sorting them is cheap, and the list of all sessions scans
-- this small table.
CREATE INDEX sessions_by_cwd ON sessions (cwd);

-- The append log. raw is the entry's JSON exactly as written (the truth;
-- every other column is read from it). The key pk = session * 2^32 + seq
-- makes a session's entries one contiguous range of the table in append
-- order, so the log with a cursor is a range scan of the primary key and
-- needs no index of its own.
--
-- Columns the queries need: id, parent_id (and parent_pk, the parent's
-- key, so walks up the tree are rowid lookups), type, timestamp, target_id
-- (label and leaf entries), custom_type, role (messages).
--
-- Placement, computed at insert from the parent and never changed:
--   depth        1 for a root, parent's + 1;
--   start_depth  the depth where the entry's path (cut at the compaction
--                boundary) starts: the parent's, except for a compaction,
--                which starts it at itself (retainedTail), at its
--                firstKeptEntryId if that is an ancestor, else at 1;
--   thinking_pk, model_pk, tools_pk
--                the latest thinking_level_change, model setter
--                (model_change or assistant message) and
--                active_tools_change on the entry's full path, itself
--                included: the state at any entry is these three rows.
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

-- Children of an entry (tree views, the recursive walk's join is on the
-- UNIQUE (session, id) index above).
CREATE INDEX entries_by_parent ON entries (session, parent_id);

-- Entries by type in append order (the index ends in the rowid, pk), for
-- every type but message: messages are most of a log, so they are read
-- by the primary-key range of the session (filtered by type), and leaving
-- them out of this index spares most appends one page write. Queries
-- repeat the index's condition (type <> 'message') so SQLite uses it.
CREATE INDEX entries_by_type ON entries (session, type) WHERE type <> 'message';

-- History is never rewritten: the database itself refuses to change an
-- entry, and to delete one unless its whole session is being deleted.
-- The engine's connections set recursive_triggers, so the delete hidden
-- in INSERT OR REPLACE is refused too.
CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
BEGIN
    SELECT RAISE(ABORT, 'entries are append-only: UPDATE refused');
END;

CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
WHEN NOT EXISTS (SELECT 1 FROM sessions WHERE pk = OLD.session AND deleting = 1)
BEGIN
    SELECT RAISE(ABORT, 'entries are append-only: DELETE refused outside a session delete');
END;

-- Marking a session deleting cannot be undone, so it cannot be used to
-- delete a few entries and carry on.
CREATE TRIGGER sessions_deleting_is_final BEFORE UPDATE OF deleting ON sessions
WHEN OLD.deleting = 1 AND NEW.deleting <> 1
BEGIN
    SELECT RAISE(ABORT, 'a session being deleted cannot be restored');
END;

-- The materialized active branch: per session, the leaf's full path as
-- depth -> entry key, rows 1..leaf_depth. Reading the active path is one
-- range scan; an append adds one row; moving the leaf rewrites only the
-- rows below the point where the old and new paths meet (found by a
-- recursive query walking up from the target until it meets a row of
-- this table). The path from any entry on the active branch is a prefix
-- of it. Check() verifies it equals the path recomputed from parent ids.
CREATE TABLE branch (
    session INTEGER NOT NULL REFERENCES sessions (pk),
    depth   INTEGER NOT NULL CHECK (depth >= 1),
    entry   INTEGER NOT NULL,
    PRIMARY KEY (session, depth)
) WITHOUT ROWID;

-- Current labels (labels are global, not per branch): the latest label
-- entry per target wins, an empty label deletes the row. entry is the
-- label entry that set it.
CREATE TABLE labels (
    session   INTEGER NOT NULL REFERENCES sessions (pk),
    target_id TEXT    NOT NULL,
    label     TEXT    NOT NULL,
    entry     INTEGER NOT NULL,
    PRIMARY KEY (session, target_id)
) WITHOUT ROWID;

-- Room to grow: full-text search (issue 5) comes as a new migration, an
-- FTS5 table over the text of message entries keyed by entries.pk.
