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
--   * session list, leaf, name, stats, and info's counts of branches,
--     roots, compactions and labels: one sessions row;
--   * the folded tree: its roots, forks, tips, labels, leaf, compactions,
--     summaries and context edits, found through entries_roots,
--     entries_by_parent, entries_by_type, labels and branch, in rows
--     proportional to what it shows (engine.Storage.Outline);
--   * usage over every session (`sessiontree usage`): usage_days, a few
--     rows per session and day;
--   * active path and context: one range scan of branch;
--   * path from an entry off the active branch: a recursive query over
--     entries.parent_id that stops at the entry's start_depth (where the
--     compaction rule cut it when it was placed), checks that each step
--     goes up one depth, and is bounded by the session's entry count (a
--     longer walk is a cycle);
--   * state (thinking level, model, tools) at any entry: the entry's three
--     pointers, a constant number of rows;
--   * append: one entries row, one branch row, the sessions row, in one
--     BEGIN IMMEDIATE transaction that reads the leaf inside it (or
--     knows it: the engine's write connection remembers the sessions it
--     wrote, while SQLite's data version shows no other writer).

PRAGMA application_id = 1937011301; -- 0x73747265, "stre": Open refuses other files
PRAGMA user_version = 29;           -- the latest migration, mirrored in the header

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
--   entry_count ...   the counters and usage totals of Stats, by
--                     sessiontree.StatsOf's rules (pi 1.6.0's /session):
--                     every entry, every message entry, messages by role
--                     (migration 9), the assistant messages' tool calls,
--                     and the tokens and cost of every usage record,
--                     the cost added one record at a time in log order
--                     as pi adds it (a float sum's last bits depend on
--                     the order);
--   usage_buckets     the cost breakdown (migration 9): a JSON array, in
--                     order of first use, of the buckets
--                     ("provider/model", or "Tools/summaries" for tool
--                     results and compaction and branch summaries, as
--                     sessiontree.StatsOf names them), each with the seq
--                     of the entry that first used it, its tokens (input
--                     + output + cacheRead + cacheWrite) and its cost,
--                     summed in log order like the session's and written
--                     in digits that read back as the same double:
--                     [{"bucket":"anthropic/m1","first_seq":7,
--                       "tokens":6510,"cost":0.0123}].
--                     It lives in this row, which every append writes
--                     anyway: a table of its own cost an append with usage
--                     one more page (BenchmarkAppend, engine/breakdown.go).
--                     Stats puts the buckets in pi's order
--                     (sessiontree.SortBreakdown: zero buckets left out,
--                     by cost, ties in order of first use);
--   branch_count ...  what `sessiontree info` shows of the tree
--                     (migration 15, sessiontree.ShapeOf's rules): its
--                     tips (entries nothing was appended under, leaf
--                     entries aside), its roots (entries without a parent
--                     in the tree), its compactions, and its labels (rows
--                     of labels); the engine keeps the tree's (engine/shape.go,
--                     migration 19), a trigger below the labels';
--   name              the latest session_info name;
--   updated_at        the newest entry's timestamp;
--   first_user_text   what a session list shows: the text of the first
--                     user message that has text, by pi's rule
--                     (sessiontree.UserText; migrations 2 and 9);
--   metadata          free-form JSON an application keeps with the
--                     session (package store, migration 3);
--   indexed_count     how many of the session's entries (seq 1 ..
--                     indexed_count) the search index holds; the rest
--                     are pending (migration 7, below);
--   deleting          set by DeleteSession, the one state in which the
--                     session's entries may be deleted.
--   header_checksum   sessiontree.HeaderChecksum of the header columns
--                     (id, version, created_at, cwd, parent_session),
--                     written once, by the insert that creates the
--                     session, and compared with them by Check, one row
--                     (migration 25).
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
    first_user_text TEXT,
    metadata       TEXT CHECK (metadata IS NULL OR json_valid(metadata)),
    indexed_count  INTEGER NOT NULL DEFAULT 0
        CHECK (indexed_count >= 0 AND indexed_count <= entry_count),
    user_messages      INTEGER NOT NULL DEFAULT 0,
    assistant_messages INTEGER NOT NULL DEFAULT 0,
    tool_results       INTEGER NOT NULL DEFAULT 0,
    tool_calls         INTEGER NOT NULL DEFAULT 0,
    usage_buckets      TEXT    NOT NULL DEFAULT '[]',
    branch_count     INTEGER NOT NULL DEFAULT 0,
    root_count       INTEGER NOT NULL DEFAULT 0,
    compaction_count INTEGER NOT NULL DEFAULT 0,
    label_count      INTEGER NOT NULL DEFAULT 0,
    header_checksum  INTEGER CHECK (header_checksum BETWEEN 0 AND 4294967295)
);

-- A session an engine from before migration 25 inserts (no sum) gets its
-- sum from its columns as it goes in (migration 27); an engine older than
-- that defines no header_checksum() and cannot create sessions here.
CREATE TRIGGER sessions_header_unsummed AFTER INSERT ON sessions
WHEN NEW.header_checksum IS NULL
BEGIN
    UPDATE sessions SET header_checksum = header_checksum(NEW.id, NEW.version, NEW.created_at, NEW.cwd, NEW.parent_session)
    WHERE pk = NEW.pk;
END;

-- The schema fence (migration 28): every write of a session's derived
-- values writes its sessions row, and these refuse it, with its
-- transaction, on a connection of a program older than the schema.
-- sessiontree_upgrade_needed(N) is the engine's SQL function (engine/fence.go):
-- 1 when the program knows no schema N. An engine from before migration
-- 28 does not define it ('no such function'). A migration that changes a
-- rule of derived values creates them again with its own version.
CREATE TRIGGER sessions_fence_insert BEFORE INSERT ON sessions
WHEN sessiontree_upgrade_needed(28)
BEGIN
    SELECT RAISE(ABORT, 'the database has schema 28, newer than this program: upgrade sessiontree to write to it');
END;

CREATE TRIGGER sessions_fence_update BEFORE UPDATE ON sessions
WHEN sessiontree_upgrade_needed(28)
BEGIN
    SELECT RAISE(ABORT, 'the database has schema 28, newer than this program: upgrade sessiontree to write to it');
END;

CREATE TRIGGER sessions_fence_delete BEFORE DELETE ON sessions
WHEN sessiontree_upgrade_needed(28)
BEGIN
    SELECT RAISE(ABORT, 'the database has schema 28, newer than this program: upgrade sessiontree to write to it');
END;

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
--
-- canonical (migration 6) is 1 when raw begins with "type", "id",
-- "parentId" and "timestamp", in that order, holding exactly what the
-- columns hold (as the engine writes every entry it builds, and as pi
-- writes its files): a reader then takes the four fields from the JSON it
-- reads anyway instead of four more columns (engine/canonical.go has the
-- measured gain). NULL (entries given in another shape; migration 16
-- marked the older rows that are canonical) means: decode raw, which
-- holds what the columns hold.
--
-- checksum (migration 11) is the CRC-32C of raw's bytes
-- (sessiontree.EntryChecksum), written with the row: SQLite's checks see
-- pages, not values, so a letter changed inside the JSON or JSON cut short
-- would otherwise be read as the entry. engine.Check verifies every row's
-- and the reads that hand out entries verify theirs, and report a
-- mismatch, or a row without one, as a corrupt session. Migration 11
-- filled it for the rows before it, except those whose JSON was already
-- damaged.
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
    canonical   INTEGER CHECK (canonical IS NULL OR canonical = 1),
    checksum    INTEGER CHECK (checksum BETWEEN 0 AND 4294967295),
    UNIQUE (session, id),
    CHECK (seq BETWEEN 1 AND 4294967295 AND pk = session * 4294967296 + seq)
);

-- Children of an entry (the walk up from an entry follows parent_pk, a
-- rowid lookup, or parent_id through UNIQUE (session, id) above). Every
-- append writes one page of each b-tree its row goes into, and under WAL
-- each page is a frame of the log, most of an append's cost; an index of
-- every entry by parent, at a random place since ids are random, cost
-- one more. Most entries are the child of the entry appended just before
-- them (parent_pk = pk - 1), so the index leaves those out and an append
-- on the leaf writes no page of it: the children of entry X are the entry
-- X + 1 if its parent_pk is X, and the index's entries with parent_pk X
-- (migration 6).
CREATE INDEX entries_by_parent ON entries (parent_pk) WHERE parent_pk <> pk - 1;

-- The roots of each session (migration 15), for the folded tree
-- (engine.Storage.Outline), which finds every other entry it names
-- through entries_by_parent, entries_by_type, labels and branch. Few
-- entries are roots, so few appends write a page of it.
CREATE INDEX entries_roots ON entries (session) WHERE parent_pk IS NULL;

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

-- Usage per session, day and bucket (migration 12), for reports over
-- every session that read no entry: the tokens and cost of the usage
-- records pi's /session breakdown counts (sessiontree.StatsOf), summed per
-- session, day and bucket. day is sessiontree.UsageDay of the entry's
-- timestamp: its UTC date ("2026-12-03"; a time without zone, its date as
-- written), '' when the timestamp is not a time or its year is not 0001 to
-- 9999 (migrations 20 and 21 recomputed the rows older readers kept); bucket is the breakdown's key ("provider/model" as pi
-- writes the values, migration 22 recomputing the rows of older keys, or
-- "Tools/summaries"). Every write adds its records in its transaction, the
-- costs one record at a time in log order like the session's, so a
-- session's rows add up to its sessions row totals and engine.Check
-- compares them exactly with a replay. An append without usage writes no
-- row. Deleting a session deletes its rows.
CREATE TABLE usage_days (
    day         TEXT    NOT NULL,
    session     INTEGER NOT NULL REFERENCES sessions (pk),
    bucket      TEXT    NOT NULL,
    input       INTEGER NOT NULL,
    output      INTEGER NOT NULL,
    cache_read  INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    cost        REAL    NOT NULL,
    PRIMARY KEY (day, session, bucket)
) WITHOUT ROWID;

CREATE INDEX usage_days_by_session ON usage_days (session);

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

-- The tree's counts in the sessions row (migration 15) are the engine's
-- to keep (engine/shape.go, migration 19); label_count is kept here as
-- the labels table gains and loses rows.
CREATE TRIGGER labels_count_insert AFTER INSERT ON labels
BEGIN
    UPDATE sessions SET label_count = label_count + 1 WHERE pk = NEW.session;
END;

CREATE TRIGGER labels_count_delete AFTER DELETE ON labels
BEGIN
    UPDATE sessions SET label_count = label_count - 1 WHERE pk = OLD.session;
END;

-- The session store (package store, issue 5) ------------------------------

-- What importing pi's session files remembers about each file (migration
-- 3), by absolute path, so that importing it again does only what is new:
-- the file's first imported_bytes bytes went into session_id, and
-- prefix_sha256 is their SHA-256, so a file whose imported part changed
-- (a conflict) is told from one that only grew (pi appends). position is
-- the JSONL reader's resume point after the last imported line (JSON of
-- jsonl.Position: offset, line, version, and what a version-1 file needs
-- to go on inventing ids); session_entries is the session's entry count
-- right after the import, so that entries appended to the session in the
-- store since are noticed before the file's new lines would be merged.
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

-- Full-text search (migration 4).
--
-- search_text is the text of each entry worth finding, computed from its
-- JSON by entry_indexed_text, a SQL function the engine defines on its
-- connections (engine/searchtext.go, migrations 13 and 23), so that every write
-- path, the batch import included, keeps the index without knowing about
-- it: message content (a string, or its text, thinking and tool-call
-- argument blocks; tool results are messages too), a bash execution's
-- command and output, custom-message content, compaction and branch
-- summaries, and session names (session_info entries). Entries of other
-- types, and entries without text, have no row. Every text ends in two
-- newlines, so that each of its characters starts a trigram (see the
-- tokenizer below). A text is cut to its first 1 MiB (migration 10), in
-- bytes, so one huge tool output costs the index, the searches that rank
-- it and the snippets cut from it no more than a megabyte of text; the
-- entry itself is stored whole. The function walks the entry's JSON once
-- and copies no more than the cap; it gives the text as a JSON array of
-- it ([] for none), which json_each takes once per entry. A NUL in the
-- text is a space and bytes that are not UTF-8 are left out
-- (sessiontree.IndexedText, migration 23), as on PostgreSQL.
CREATE VIEW search_text (pk, body) AS
SELECT e.pk AS pk, t.value || char(10) || char(10) AS body
FROM entries AS e, json_each(entry_indexed_text(e.type, CAST(e.raw AS BLOB))) AS t
WHERE e.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info');

-- The index: an external-content FTS5 table over search_text. The text
-- is not stored twice, snippets are cut from the view for the hits shown,
-- and the rowid is the entry's key, so a search within one session is a
-- rowid range and a hit joins entries and branch (is it on the active
-- branch?) by primary key.
--
-- Tokenizer: trigram. Chinese and Japanese are written without spaces
-- between words, so a word tokenizer (unicode61, porter) would index a
-- whole run of CJK text as one token and never find a word inside it;
-- trigram indexes every sequence of three characters, so any substring of
-- three characters or more is found, in any script, and in English it
-- also finds parts of identifiers and paths (parent_id, store.go), which
-- coding sessions are full of. It folds case. Queries of one or two
-- characters (common in CJK: 日本, 猫) have no trigram of their own; the
-- store expands them into the trigrams of the index's vocabulary that
-- start with them (entries_fts_vocab; every character of a text starts
-- one, thanks to the two trailing newlines), or, when that is too many,
-- scans the text. The cost is size: the index is a few times the text.
--
-- Caveat: FTS5 reads external content for its 'rebuild' command and its
-- 'integrity-check' with rank 1 through statements that may not use
-- virtual tables, and the view needs json_each and json_tree, so those
-- two fail. Rebuild with INSERT INTO entries_fts (rowid, body) SELECT pk,
-- body FROM search_text (as migration 4 does) after a 'delete-all';
-- store.Check compares the index with the view itself instead (each
-- entry's document, and a sample's token counts and trigrams; see
-- store/indexcheck.go). Queries, snippets and the delete trigger read
-- the view normally.
CREATE VIRTUAL TABLE entries_fts USING fts5 (
    body,
    content = 'search_text',
    content_rowid = 'pk',
    tokenize = 'trigram'
);

CREATE VIRTUAL TABLE entries_fts_vocab USING fts5vocab (entries_fts, 'row');

-- The index catches up instead of being written by every append
-- (migration 7). Indexing an entry's text costs far more than storing the
-- entry: the trigram tokenizer makes a token of every character, and FTS5
-- writes a new segment, and merges older ones, at every commit that
-- changed the index. So a write stores entries only, and
-- sessions.indexed_count says how many of a session's entries the index
-- holds (seq 1 .. indexed_count); the rest are pending.
-- store.Store.Index brings pending entries into the index, a chunk at a
-- time (bounded in entries and in bytes), in write transactions that
-- also advance indexed_count; the command line's import runs it when it
-- ends, and a search when it can take the write lock at once. A search
-- reads what is still pending itself (within bounds), so it sees every
-- committed entry without writing. Indexing many entries at once makes
-- one segment of them instead of one per append. The index and
-- indexed_count change in one transaction, so a crash cannot tear them
-- apart.
--
-- Deleting a session removes from the index what it holds; the BEFORE
-- trigger reads the text the index must remove while the row is still
-- there.
CREATE TRIGGER entries_fts_delete BEFORE DELETE ON entries
WHEN OLD.type IN ('message', 'custom_message', 'compaction', 'branch_summary', 'session_info')
 AND OLD.seq <= (SELECT indexed_count FROM sessions WHERE pk = OLD.session)
BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, body)
    SELECT 'delete', pk, body FROM search_text WHERE pk = OLD.pk;
END;

-- The sessions the index lags behind (migration 8): exactly those with
-- indexed_count < entry_count, so a search finds what is pending by
-- reading this short table, empty when the index is current, instead of
-- every sessions row (4 ms at 10,000 sessions). Triggers keep it exact
-- whoever writes: a write that leaves a session pending adds it, one that
-- leaves it caught up (store.Store.Index advancing indexed_count) removes
-- it, and so does deleting the session. An append to a session already
-- listed writes no page (INSERT OR IGNORE finds the row), so appends pay a
-- row once after each search and a seek otherwise. A partial index on
-- sessions would not do: entry_count is in its WHERE clause, so every
-- append would rewrite a page of it.
CREATE TABLE search_pending (
    session INTEGER PRIMARY KEY
);

CREATE TRIGGER sessions_pending_insert AFTER INSERT ON sessions
WHEN NEW.indexed_count < NEW.entry_count
BEGIN
    INSERT OR IGNORE INTO search_pending (session) VALUES (NEW.pk);
END;

CREATE TRIGGER sessions_pending_update AFTER UPDATE OF entry_count, indexed_count ON sessions
WHEN NEW.indexed_count < NEW.entry_count
BEGIN
    INSERT OR IGNORE INTO search_pending (session) VALUES (NEW.pk);
END;

CREATE TRIGGER sessions_caught_up AFTER UPDATE OF entry_count, indexed_count ON sessions
WHEN NEW.indexed_count >= NEW.entry_count
BEGIN
    DELETE FROM search_pending WHERE session = NEW.pk;
END;

CREATE TRIGGER sessions_forget_pending AFTER DELETE ON sessions
BEGIN
    DELETE FROM search_pending WHERE session = OLD.pk;
END;

-- FTS5 keeps pending index data in memory until it reaches hashsize (1
-- MiB by default) or a statement or transaction ends, then writes it out
-- as a segment that later merges rewrite. The trigram tokenizer makes a
-- token of every character, so 1 MiB fills fast; 16 MiB makes a bulk
-- write's segments sixteen times fewer and its merges cheaper, at the
-- cost of that much memory on the writing connection during a large
-- write (migration 5). Not part of sqlite_master: a setting in
-- entries_fts_config.
INSERT INTO entries_fts (entries_fts, rank) VALUES ('hashsize', 16777216);

-- FTS5 merges segments once 16 sit at one level (its default: 4), so a
-- catch-up rewrites each trigram half as often, for a query that reads
-- up to 15 segments per level instead of 3 (migration 17).
INSERT INTO entries_fts (entries_fts, rank) VALUES ('automerge', 16);

-- The indexed entries deleted since the index's last full merge
-- (migration 29, engine/searchmerge.go): each session delete adds those
-- it removed, in its transaction; when they reach the rows the index
-- holds (and 1,000), that delete merges every segment into one, which
-- drops the delete markers, and sets the count to 0.
CREATE TABLE search_merge (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    deleted INTEGER NOT NULL CHECK (deleted >= 0)
);

INSERT INTO search_merge (id, deleted) VALUES (1, 0);

-- Writer claims (migration 14, engine/claim.go): one row per session ever
-- claimed; fence only grows, a release keeps the row with holder '' and
-- expires_ms 0, and a claim is live while expires_ms (Unix milliseconds)
-- is in the future.
CREATE TABLE claims (
    session    INTEGER PRIMARY KEY REFERENCES sessions (pk) ON DELETE CASCADE,
    holder     TEXT    NOT NULL,
    fence      INTEGER NOT NULL CHECK (fence > 0),
    expires_ms INTEGER NOT NULL
);
