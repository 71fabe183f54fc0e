package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree"
)

// Comparing the search index with the entries' text.
//
// The index is filled from the search_text view (schema.sql): FTS5's
// trigram tokenizer cuts an entry's text into one token per character
// (every three characters starting there), and the index keeps, for each
// entry, its token count (entries_fts_docsize) and where each trigram
// occurs. It does not keep the text. FTS5 can compare itself with its
// content ('integrity-check' with rank 1), but not with this content,
// which it reads through statements that may not use the view's json_each
// (schema.sql, Caveat). So [Database.Check] compares, in two steps:
//
//   - every entry (the keys of the view's rows merged with the index's
//     documents in key order): the index holds a document exactly for the
//     entries with text up to their session's mark. Reading the view's
//     keys computes each entry's text once, for the view's condition that
//     it is not empty, as counting its rows did before;
//   - for a sample of the entries, drawn at random: the document's token
//     count is what the entry's text gives, and every third trigram of
//     the text, and the last, is in the document. A changed letter leaves
//     the count as it was but is in three consecutive trigrams the index
//     lacks, one of which is looked up. Reading the text of every
//     entry would cost about twice as much as its key, since the view
//     computes the text for its condition and again for its value: 4.5 s
//     for the keys of a store of 430,000 entries, 8.5 s with the texts.
//     And one trigram costs an index lookup, 0.1 to 0.4 ms in that store
//     (a phrase of them more per trigram), so comparing every text whole
//     would take about as long as indexing it again. The sample is bounded
//     by the lookups it makes (Options.CheckLookups, about a second in that
//     store, a tenth of one in a small one): a small store is compared
//     whole, whatever the machine's speed, a large one in part, a
//     different part at each check (in that store, some 120 entries).
//
// A session's check (checkSessionSearch) does both steps for its session
// alone, in the transaction of its replay: which of its entries have
// text comes from the rows the replay read (sessiontree.HasSearchText,
// which stops at a text's first byte), not from the view, and its sample
// is bounded by a tenth of Options.CheckLookups (sessionSampleShare).

const (
	// indexSampleDocs is how many documents the content comparison draws.
	indexSampleDocs = 1024
	// indexSampleLookups is the default bound of the content comparison
	// (Options.CheckLookups): it stops after looking up this many
	// trigrams (each distinct trigram of a text once).
	indexSampleLookups = 5000
	// sessionSampleShare divides the bound for one session's check (the
	// command line's check SESSION, whose cost is held to its session's
	// size): by default 500 lookups, about a twentieth of a second (a
	// hundred microseconds each in a compacted session of 100,000
	// entries). A session small enough is still compared whole.
	sessionSampleShare = 10
)

const (
	qCheckMarks = `SELECT pk, indexed_count FROM sessions WHERE pk BETWEEN ?1 AND ?2`
	// The view gives its rows in key order (a scan of entries by key), as
	// the docsize table does.
	qCheckTexts   = `SELECT pk FROM search_text WHERE pk BETWEEN ?1 AND ?2 ORDER BY pk`
	qCheckDocs    = `SELECT id FROM entries_fts_docsize WHERE id BETWEEN ?1 AND ?2 ORDER BY id`
	qCheckText    = `SELECT CAST(body AS BLOB) FROM search_text WHERE pk = ?1`
	qCheckDocSize = `SELECT sz FROM entries_fts_docsize WHERE id = ?1`
	qCheckTrigram = `SELECT 1 FROM entries_fts WHERE entries_fts MATCH ?1 AND rowid = ?2`
	qCheckPending = `SELECT count(*), coalesce(min(s.id), '') FROM sessions s
WHERE s.pk BETWEEN ?1 AND ?2 AND (s.indexed_count < s.entry_count) <> EXISTS (SELECT 1 FROM search_pending p WHERE p.session = s.pk)`
	qCheckEntryID = `SELECT e.id, s.id FROM entries e JOIN sessions s ON s.pk = e.session WHERE e.pk = ?1`
)

// indexChecker compares the index with the text of the entries with keys
// lo..hi (one session's, or all).
type indexChecker struct {
	ctx    context.Context
	tx     *sqlx.Tx
	lo, hi int64
	// marks holds each session's indexed_count by key: the index holds
	// its entries up to that seq.
	marks map[int64]int64
	// sample holds the keys of the documents drawn for the content
	// comparison (reservoir sampling over the documents met, seen).
	sample []int64
	seen   int
	rng    *rand.Rand
	// lookups bounds the content comparison (Options.CheckLookups, or
	// a session's share of it for one session).
	lookups int
}

// checkSearchIndex compares the search index with the entries' text of
// every session, in one read transaction: both steps of the comparison,
// then search_pending against the marks.
func (db *DB) checkSearchIndex(ctx context.Context) error {
	var lo, hi int64 = 0, 1<<63 - 1
	err := db.readView(ctx, func(t *Tx) error {
		if err := checkIndexText(ctx, t.tx, lo, hi, db.opts.CheckLookups); err != nil {
			return err
		}
		return checkPending(ctx, t.tx, lo, hi)
	})
	if err != nil {
		return fmt.Errorf("check search index: %w", err)
	}
	return nil
}

// checkSessionSearch compares the search index with the text of the
// session rp replayed, in the replay's transaction: the index holds a
// document exactly for its entries with text up to its mark (rp.texts,
// which the replay noted from the rows it read, so the view's text is not
// computed again); then the content comparison over a sample, bounded by
// a tenth of Options.CheckLookups, and search_pending for the session.
func checkSessionSearch(ctx context.Context, tx *sqlx.Tx, rp *replayed, lookups int) error {
	lo, hi := pkRange(rp.pk)
	c, err := newIndexChecker(ctx, tx, lo, hi, max(lookups/sessionSampleShare, 1))
	if err != nil {
		return err
	}
	if err := c.sessionDocuments(rp.texts); err != nil {
		return err
	}
	if err := c.content(); err != nil {
		return err
	}
	return checkPending(ctx, tx, lo, hi)
}

// sessionDocuments is the first step for one session, the keys of whose
// entries with text (in key order) the replay gave.
func (c *indexChecker) sessionDocuments(texts []int64) error {
	docs, err := c.tx.QueryContext(c.ctx, qCheckDocs, c.lo, c.hi)
	if err != nil {
		return err
	}
	defer docs.Close()
	i := 0
	for docs.Next() {
		var id int64
		if err := docs.Scan(&id); err != nil {
			return err
		}
		if err := c.compareDocument(texts, &i, id); err != nil {
			return err
		}
	}
	if err := docs.Err(); err != nil {
		return err
	}
	return c.compareDocument(texts, &i, c.hi+1)
}

// compareDocument compares the index's next document, doc (hi+1 after
// the last), with the entries with text from texts[*i]: those before it
// must not be indexed yet, and doc must be the next of them, indexed.
func (c *indexChecker) compareDocument(texts []int64, i *int, doc int64) error {
	for ; *i < len(texts) && texts[*i] < doc; *i++ {
		if c.indexed(texts[*i]) {
			return c.corrupt(texts[*i], "the search index holds no document for its text")
		}
	}
	if doc > c.hi {
		return nil
	}
	if *i == len(texts) || texts[*i] != doc {
		return c.corrupt(doc, "the search index holds a document for it, and it has no text")
	}
	*i++
	if !c.indexed(doc) {
		return c.corrupt(doc, "the search index holds a document for it, which is not indexed yet")
	}
	c.draw(doc)
	return nil
}

// checkPending compares search_pending with the marks of the sessions
// of keys lo>>32..hi>>32: it must list exactly the sessions the index
// lags behind, or a search would miss the entries of one left out. The
// report names the first session wrong, by id.
func checkPending(ctx context.Context, tx *sqlx.Tx, lo, hi int64) error {
	var unlisted int64
	var first string
	err := tx.QueryRowContext(ctx, qCheckPending, lo>>32, hi>>32).Scan(&unlisted, &first)
	if err != nil {
		return err
	}
	if unlisted != 0 {
		return &sessiontree.CorruptError{
			Reason: fmt.Sprintf("the list of sessions it lags behind is wrong for %d sessions (session %s first)", unlisted, first)}
	}
	return nil
}

// checkIndexText runs both steps of the comparison in tx, the second
// bounded by lookups.
func checkIndexText(ctx context.Context, tx *sqlx.Tx, lo, hi int64, lookups int) error {
	c, err := newIndexChecker(ctx, tx, lo, hi, lookups)
	if err != nil {
		return err
	}
	if err := c.documents(); err != nil {
		return err
	}
	return c.content()
}

// newIndexChecker reads the marks of the sessions of keys lo..hi.
func newIndexChecker(ctx context.Context, tx *sqlx.Tx, lo, hi int64, lookups int) (*indexChecker, error) {
	c := &indexChecker{ctx: ctx, tx: tx, lo: lo, hi: hi, marks: map[int64]int64{}, lookups: lookups,
		rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	rows, err := tx.QueryContext(ctx, qCheckMarks, lo>>32, hi>>32)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var pk, indexed int64
		if err := rows.Scan(&pk, &indexed); err != nil {
			return nil, err
		}
		c.marks[pk] = indexed
	}
	return c, rows.Err()
}

// corrupt reports a problem of the document with key pk, naming its
// session and entry.
func (c *indexChecker) corrupt(pk int64, format string, a ...any) error {
	reason := fmt.Sprintf(format, a...)
	var entry, session string
	err := c.tx.QueryRowContext(c.ctx, qCheckEntryID, pk).Scan(&entry, &session)
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return &sessiontree.CorruptError{Reason: fmt.Sprintf("%s (key %d, no such entry)", reason, pk)}
	}
	return fmt.Errorf("session %s: %w", session, &sessiontree.CorruptError{EntryID: entry, Reason: reason})
}

// indexed reports whether the index should hold the entry with key pk,
// if it has text: it is at or below its session's mark.
func (c *indexChecker) indexed(pk int64) bool {
	indexed, ok := c.marks[pk>>32]
	return ok && pk&0xffffffff <= indexed
}

// documents is the first step: the documents are those of the entries
// with text up to their session's mark.
func (c *indexChecker) documents() error {
	texts, err := c.tx.QueryContext(c.ctx, qCheckTexts, c.lo, c.hi)
	if err != nil {
		return err
	}
	defer texts.Close()
	docs, err := c.tx.QueryContext(c.ctx, qCheckDocs, c.lo, c.hi)
	if err != nil {
		return err
	}
	defer docs.Close()
	var docID int64
	haveDoc := false
	nextDoc := func() error {
		haveDoc = docs.Next()
		if !haveDoc {
			return docs.Err()
		}
		return docs.Scan(&docID)
	}
	if err := nextDoc(); err != nil {
		return err
	}
	for n := 0; texts.Next(); n++ {
		if n%4096 == 4095 {
			if err := c.ctx.Err(); err != nil {
				return err
			}
		}
		var pk int64
		if err := texts.Scan(&pk); err != nil {
			return err
		}
		if haveDoc && docID < pk {
			return c.corrupt(docID, "the search index holds a document for it, and it has no text")
		}
		want := c.indexed(pk)
		has := haveDoc && docID == pk
		switch {
		case want && !has:
			return c.corrupt(pk, "the search index holds no document for its text")
		case !want && has:
			return c.corrupt(pk, "the search index holds a document for it, which is not indexed yet")
		case has:
			c.draw(pk)
			if err := nextDoc(); err != nil {
				return err
			}
		}
	}
	if err := texts.Err(); err != nil {
		return err
	}
	if haveDoc {
		return c.corrupt(docID, "the search index holds a document for it, and it has no text")
	}
	return nil
}

// draw offers document pk to the sample.
func (c *indexChecker) draw(pk int64) {
	c.seen++
	if len(c.sample) < indexSampleDocs {
		c.sample = append(c.sample, pk)
	} else if j := c.rng.IntN(c.seen); j < indexSampleDocs {
		c.sample[j] = pk
	}
}

// content is the second step: a sampled entry's document has the token
// count of its text and every third of its trigrams and the last, until
// c.lookups trigrams have been looked up.
func (c *indexChecker) content() error {
	if len(c.sample) == 0 {
		return nil
	}
	c.rng.Shuffle(len(c.sample), func(i, j int) { c.sample[i], c.sample[j] = c.sample[j], c.sample[i] })
	lookup, err := c.tx.PrepareContext(c.ctx, qCheckTrigram)
	if err != nil {
		return err
	}
	defer lookup.Close()
	lookups := 0
	for _, pk := range c.sample {
		var body, docSize []byte
		if err := c.tx.QueryRowContext(c.ctx, qCheckText, pk).Scan(&body); err != nil {
			return err
		}
		if err := c.tx.QueryRowContext(c.ctx, qCheckDocSize, pk).Scan(&docSize); err != nil {
			return err
		}
		size, ok := varint(docSize)
		count := trigrams(body)
		if !ok || size != uint64(count) {
			return c.corrupt(pk, "its document in the search index has %d tokens, its text gives %d", size, count)
		}
		seen := map[string]bool{}
		var problem error
		done := false
		eachTrigram(body, func(i int, t string) bool {
			if !sampled(i, count) {
				return true
			}
			k := strings.ToLower(t)
			if seen[k] {
				return true
			}
			seen[k] = true
			var one int
			err := lookup.QueryRowContext(c.ctx, quotePhrase(t), pk).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				problem = c.corrupt(pk, "its document in the search index lacks %q, which its text holds", t)
			} else if err != nil {
				problem = err
			}
			lookups++
			done = lookups >= c.lookups
			return problem == nil && !done
		})
		if problem != nil || done {
			return problem
		}
	}
	return nil
}

// tokenChars splits text into the characters of FTS5's trigram tokenizer
// (fts5_tokenize.c): a byte from 0xC0 up starts a character that takes
// every continuation byte (0x80 to 0xBF) after it; any other byte is a
// character of its own. This is UTF-8 where text is, and decides the
// split the tokenizer's way where it is not. NUL characters are skipped,
// as the tokenizer skips them. fn gets each character's bytes, until it
// returns false.
func tokenChars(text []byte, fn func(ch []byte) bool) {
	for i := 0; i < len(text); {
		j := i + 1
		if text[i] >= 0xc0 {
			for j < len(text) && text[j]&0xc0 == 0x80 {
				j++
			}
		}
		if text[i] != 0 && !fn(text[i:j]) {
			return
		}
		i = j
	}
}

// trigrams returns how many tokens the trigram tokenizer makes of text.
func trigrams(text []byte) int {
	n := 0
	tokenChars(text, func([]byte) bool { n++; return true })
	return max(n-2, 0)
}

// sampled reports whether the content comparison looks up trigram i of
// a text of count trigrams: every third and the last. A character is in
// the three trigrams that start up to two characters before it (fewer at
// the text's start, where the first is looked up, and in the last two
// characters, which the view's text always ends with two newlines to
// fill), so a changed character makes one of them missing.
func sampled(i, count int) bool { return i%3 == 0 || i == count-1 }

// eachTrigram calls fn with each trigram of text in order, its index and
// the text of its three characters (the tokenizer folds case; so does a
// query), until fn returns false.
func eachTrigram(text []byte, fn func(i int, t string) bool) {
	var last [3][]byte
	n := 0
	buf := make([]byte, 0, 12)
	tokenChars(text, func(ch []byte) bool {
		last[0], last[1], last[2] = last[1], last[2], ch
		if n++; n < 3 {
			return true
		}
		buf = append(append(append(buf[:0], last[0]...), last[1]...), last[2]...)
		return fn(n-3, string(buf))
	})
}

// varint decodes the SQLite varint at the start of b (FTS5 writes a
// document's token count as one): big-endian groups of seven bits, each
// byte but the last with its high bit set, the ninth byte whole.
func varint(b []byte) (uint64, bool) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), true
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, true
		}
	}
	return 0, false
}

// quotePhrase quotes s as one FTS5 phrase.
func quotePhrase(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
