// Package sessiontree stores the conversation trees of LLM coding agents.
//
// An agent session is a tree kept as an append-only log: every [Entry]
// (a message, a model or thinking-level change, a compaction, a branch
// summary, a label, a name, custom data, a context edit, a usage record, a
// leaf move, or a type a newer pi adds, kept as it is) has an id and the
// id of its parent. A leaf pointer picks the active branch; moving it back
// and appending starts a new branch without deleting anything. The model
// sees a projection of the active path, cut at the newest compaction, with
// context edits applied: the [Context]; [Session.Projection] pairs each of
// its messages with the entry it comes from.
//
// This package holds the model and the contracts: the entry types, the
// [Storage] interface every backend implements, [Session] (typed appends,
// labels, names, [Session.MoveTo], paths and [Session.Context]) on top of
// any storage, the [Database] contract of a database of many sessions
// (database.go), on which package store runs, and the sentinel errors.
// Backends live in their own packages: memory (in-memory), jsonl (pi's
// session files), engine (SQLite) and pgengine (PostgreSQL). Package
// storetest is the conformance suite they all pass.
//
// # What it owns
//
// No storage and no SQL: every rule that must give the same answer on
// every backend. The tree rules (replay.go, below); the stats and usage
// sums ([Tally], [UsageReport]); pi's session-list fields ([ListInfoOf],
// [UserText]); the claim terms ([ClaimTerms]); the checksum every engine
// keeps of an entry's JSON ([EntryChecksum], checksum.go); the text a
// search index holds of an entry ([SearchText], searchtext.go); and how
// a text derived from an entry keeps a NUL ([DerivedText]).
//
// The model is pi's: sessiontree reads and answers exactly like pi 1.6.0
// (@earendil-works/pi-coding-agent) and 0.73.1
// (@mariozechner/pi-coding-agent), both session format version 3; the
// files in testdata/pi1 and testdata/pi were written by those releases,
// with their answers.
//
// # The tree rules
//
// What an entry does when the log is replayed in order is written once,
// here, and every backend's load, append and batch, the engine's Check and
// the CLI's file check go through it: [EffectsOf] reads an entry's effects
// (the state settings [State.Apply] takes, the compaction cut, the target
// of a label or leaf, the label and name it sets), [Place] computes its
// depth, path start and state pointers under its parent, and a [Replayer]
// checks each entry against the earlier ones (unique id, a parent and a
// target that exist) and follows the leaf rule, labels and name. A new
// entry rule is one change there.
//
// # Lossless entries
//
// An entry keeps its whole JSON object in [Entry.Raw], byte for byte:
// fields this package does not model, and everything inside a message, come
// back exactly as written, numbers in their original text. Only the four
// common fields are decoded eagerly; a message payload is read only for its
// role, provider, model and usage ([MessageInfoOf]). What a store keeps of
// an entry (its effects, message info, stats, target, custom type and
// checksum: [Facts]) is read in one walk of its JSON by [FactsOf], or while
// an append writes it by [BuildEntryFacts]; the single readers wrap the
// same walks.
//
// # Ids
//
// "" stands for null wherever an id may be null: a root's ParentID, the
// leaf of an empty session, the target of a move to before the first entry.
//
// # Concurrency
//
// [Session] holds no mutable state; it is safe for concurrent use when its
// storage is. Each backend documents its own rules.
//
// Writers may take a fenced, expiring claim on a session ([Claimer]) so
// that two agents never write one session at once by mistake; readers
// need none. [Follow] follows a session as other processes append to it.
package sessiontree
