-- The session tree on PostgreSQL (package pgengine): the SQLite engine's
-- tables (schema.sql at the repository root) in PostgreSQL's terms.
--
--   * session list, leaf, name, stats: one sessions row;
--   * active path and context: one range scan of branch;
--   * path from an entry off the active branch: a recursive query over
--     entries' parents up to where it meets branch;
--   * state at any entry: the entry's three pointers;
--   * append: one entries row, one branch row and the sessions row, in one
--     transaction that locks the sessions row (SELECT ... FOR UPDATE) and
--     reads the leaf under the lock, so writes to one session serialize
--     and writes to different sessions run in parallel.

-- One row per session: pi's header, and what changes with each append,
-- kept in the append's transaction:
--   leaf_seq/leaf_id  the current leaf (NULL: before the first entry);
--   leaf_depth        its depth, the number of branch rows;
--   boundary_depth    where the active path starts (the compaction
--                     boundary): the active path is branch rows
--                     boundary_depth..leaf_depth;
--   entry_count ...   the counters and usage totals of Stats
--                     (sessiontree.Tally over the log, in log order; the
--                     cost summed one record at a time as pi sums it);
--   usage_buckets     the cost breakdown in order of first use, JSON
--                     [{"key":"anthropic/m1","cost":0.01,"tokens":6510}]
--                     (sessiontree.UsageBucket);
--   name              the latest session_info name;
--   updated_at        the newest entry's timestamp;
--   first_user_text   the session list's title (sessiontree.UserText);
--   metadata          free-form JSON an application keeps with it;
--   deleting          set by DeleteSession, the one state in which the
--                     session's entries may be deleted.
CREATE TABLE sessions (
    pk                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                 text    NOT NULL UNIQUE,
    version            integer NOT NULL,
    created_at         text    NOT NULL,
    cwd                text    NOT NULL,
    parent_session     text,
    updated_at         text    NOT NULL,
    name               text,
    leaf_seq           bigint,
    leaf_id            text,
    leaf_depth         integer NOT NULL DEFAULT 0,
    boundary_depth     integer NOT NULL DEFAULT 0,
    entry_count        bigint  NOT NULL DEFAULT 0,
    message_count      bigint  NOT NULL DEFAULT 0,
    user_messages      bigint  NOT NULL DEFAULT 0,
    assistant_messages bigint  NOT NULL DEFAULT 0,
    tool_results       bigint  NOT NULL DEFAULT 0,
    tool_calls         bigint  NOT NULL DEFAULT 0,
    input_tokens       bigint  NOT NULL DEFAULT 0,
    output_tokens      bigint  NOT NULL DEFAULT 0,
    cache_read_tokens  bigint  NOT NULL DEFAULT 0,
    cache_write_tokens bigint  NOT NULL DEFAULT 0,
    cost               double precision NOT NULL DEFAULT 0,
    usage_buckets      text    NOT NULL DEFAULT '[]',
    first_user_text    text,
    metadata           text,
    deleting           boolean NOT NULL DEFAULT false
);

CREATE INDEX sessions_by_cwd ON sessions (cwd);

-- The append log. raw is the entry's JSON exactly as written, as text
-- (jsonb would reorder keys and normalise numbers); every other column is
-- read from it. (session, seq) is the append order: the log with a cursor
-- is a range of the primary key.
--
-- Placement, computed at insert from the parent and never changed:
--   depth        1 for a root, parent's + 1;
--   start_depth  the depth where the entry's path, cut at the compaction
--                boundary, starts: the parent's, except for a compaction,
--                which starts it at itself (retainedTail), at its
--                firstKeptEntryId if that is an ancestor, else at 1;
--   thinking_seq, model_seq, tools_seq
--                the latest entry on the entry's full path (itself
--                included) that sets the thinking level, the model and
--                the tools (sessiontree.State.Apply).
CREATE TABLE entries (
    session      bigint  NOT NULL REFERENCES sessions (pk),
    seq          bigint  NOT NULL CHECK (seq >= 1),
    id           text    NOT NULL,
    parent_id    text,
    parent_seq   bigint,
    type         text    NOT NULL,
    timestamp    text    NOT NULL,
    depth        integer NOT NULL,
    start_depth  integer NOT NULL,
    thinking_seq bigint,
    model_seq    bigint,
    tools_seq    bigint,
    target_id    text,
    raw          text    NOT NULL,
    PRIMARY KEY (session, seq),
    UNIQUE (session, id)
);

-- Children of an entry, for the walks that meet two branches.
CREATE INDEX entries_by_parent ON entries (session, parent_id);

-- Entries by type in append order, every type but message (most of a log,
-- read by the primary key range instead).
CREATE INDEX entries_by_type ON entries (session, type, seq) WHERE type <> 'message';

-- History is never rewritten: the database refuses to change an entry,
-- and to delete one unless its whole session is being deleted.
CREATE FUNCTION entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION 'entries are append-only: UPDATE refused' USING ERRCODE = 'restrict_violation';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM sessions WHERE pk = OLD.session AND deleting) THEN
        RAISE EXCEPTION 'entries are append-only: DELETE refused outside a session delete' USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN OLD;
END $$;

CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
FOR EACH ROW EXECUTE FUNCTION entries_append_only();

CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
FOR EACH ROW EXECUTE FUNCTION entries_append_only();

-- TRUNCATE skips row triggers: refuse it outright.
CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON entries
FOR EACH STATEMENT EXECUTE FUNCTION entries_append_only();

-- Marking a session deleting cannot be undone.
CREATE FUNCTION sessions_deleting_is_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.deleting AND NOT NEW.deleting THEN
        RAISE EXCEPTION 'a session being deleted cannot be restored' USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER sessions_deleting_is_final BEFORE UPDATE OF deleting ON sessions
FOR EACH ROW EXECUTE FUNCTION sessions_deleting_is_final();

-- The materialized active branch: per session, the leaf's full path as
-- depth -> entry seq, rows 1..leaf_depth. Reading the active path is one
-- range scan; an append adds one row; moving the leaf rewrites only the
-- rows below the point where the old and new paths meet.
CREATE TABLE branch (
    session bigint  NOT NULL REFERENCES sessions (pk),
    depth   integer NOT NULL CHECK (depth >= 1),
    seq     bigint  NOT NULL,
    PRIMARY KEY (session, depth)
);

-- Current labels (global, not per branch): the latest label entry per
-- target wins; an empty label deletes the row. entry_seq is the label
-- entry that set it.
CREATE TABLE labels (
    session   bigint NOT NULL REFERENCES sessions (pk),
    target_id text   NOT NULL,
    label     text   NOT NULL,
    entry_seq bigint NOT NULL,
    PRIMARY KEY (session, target_id)
);
