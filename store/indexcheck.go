package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

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
// (schema.sql, Caveat). So [Store.Check] compares, in two steps:
//
//   - every entry (a scan of the view and of the token counts, merged in
//     key order: the cost of reading every text once): the index holds a
//     document exactly for the entries with text up to their session's
//     mark, and each document's token count is what the entry's text
//     gives;
//   - for a sample of the entries, drawn at random, whether each trigram
//     of the text is in the entry's document: a changed letter leaves the
//     count as it was but makes three trigrams the index lacks. One
//     trigram costs an index lookup, 0.1 to 0.4 ms in a store of 430,000
//     entries (a phrase of them costs more per trigram), so comparing the
//     whole text of every entry would take about as long as indexing it
//     again. The sample is bounded in time (indexSampleTime): a small
//     store is compared whole, a large one in part, a different part at
//     each check.

const (
	// indexSampleDocs is how many documents the content comparison draws.
	indexSampleDocs = 1024
	// indexSampleTime bounds the content comparison; it stops after the
	// trigram during which the time ran out.
	indexSampleTime = time.Second
)

const (
	qCheckMarks = `SELECT pk, id, indexed_count FROM sessions WHERE pk BETWEEN ?1 AND ?2`
	// The view gives its rows in key order (a scan of entries by key), as
	// the docsize table does.
	qCheckTexts    = `SELECT pk, CAST(body AS BLOB) FROM search_text WHERE pk BETWEEN ?1 AND ?2 ORDER BY pk`
	qCheckDocSizes = `SELECT id, sz FROM entries_fts_docsize WHERE id BETWEEN ?1 AND ?2 ORDER BY id`
	qCheckText     = `SELECT CAST(body AS BLOB) FROM search_text WHERE pk = ?1`
	qCheckTrigram  = `SELECT 1 FROM entries_fts WHERE entries_fts MATCH ?1 AND rowid = ?2`
	qCheckEntryID  = `SELECT e.id, s.id FROM entries e JOIN sessions s ON s.pk = e.session WHERE e.pk = ?1`
)

// sessionMark is what the index comparison needs of a session: its id and
// how many of its entries the index holds.
type sessionMark struct {
	id      string
	indexed int64
}

// indexChecker compares the index with the text of the entries with keys
// lo..hi (one session's, or all).
type indexChecker struct {
	ctx    context.Context
	tx     *sqlx.Tx
	lo, hi int64
	marks  map[int64]sessionMark
	// sample holds the keys of the documents drawn for the content
	// comparison (reservoir sampling over the documents met, seen).
	sample []int64
	seen   int
	rng    *rand.Rand
}

// checkIndexText runs both steps of the comparison in tx.
func checkIndexText(ctx context.Context, tx *sqlx.Tx, lo, hi int64) error {
	c := &indexChecker{ctx: ctx, tx: tx, lo: lo, hi: hi, marks: map[int64]sessionMark{},
		rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	rows, err := tx.QueryContext(ctx, qCheckMarks, lo>>32, hi>>32)
	if err != nil {
		return err
	}
	for rows.Next() {
		var pk int64
		var m sessionMark
		if err := rows.Scan(&pk, &m.id, &m.indexed); err != nil {
			rows.Close()
			return err
		}
		c.marks[pk] = m
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if err := c.sizes(); err != nil {
		return err
	}
	return c.content()
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
	m, ok := c.marks[pk>>32]
	return ok && pk&0xffffffff <= m.indexed
}

// sizes is the first step: the documents are those of the entries with
// text up to their session's mark, each with the token count of its text.
func (c *indexChecker) sizes() error {
	texts, err := c.tx.QueryContext(c.ctx, qCheckTexts, c.lo, c.hi)
	if err != nil {
		return err
	}
	defer texts.Close()
	docs, err := c.tx.QueryContext(c.ctx, qCheckDocSizes, c.lo, c.hi)
	if err != nil {
		return err
	}
	defer docs.Close()
	var docID int64
	var docSize []byte
	haveDoc := false
	nextDoc := func() error {
		haveDoc = docs.Next()
		if !haveDoc {
			return docs.Err()
		}
		return docs.Scan(&docID, &docSize)
	}
	if err := nextDoc(); err != nil {
		return err
	}
	var body []byte
	for n := 0; texts.Next(); n++ {
		if n%4096 == 4095 {
			if err := c.ctx.Err(); err != nil {
				return err
			}
		}
		var pk int64
		if err := texts.Scan(&pk, &body); err != nil {
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
			size, ok := varint(docSize)
			if got := trigrams(body); !ok || size != uint64(got) {
				return c.corrupt(pk, "its document in the search index has %d tokens, its text gives %d", size, got)
			}
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

// content is the second step: each trigram of a sampled entry's text is
// in the entry's document, until indexSampleTime has passed.
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
	deadline := time.Now().Add(indexSampleTime)
	for _, pk := range c.sample {
		var body []byte
		if err := c.tx.QueryRowContext(c.ctx, qCheckText, pk).Scan(&body); err != nil {
			return err
		}
		for _, t := range distinctTrigrams(body) {
			var one int
			err := lookup.QueryRowContext(c.ctx, quotePhrase(t), pk).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return c.corrupt(pk, "its document in the search index lacks %q, which its text holds", t)
			}
			if err != nil {
				return err
			}
			if time.Now().After(deadline) {
				return nil
			}
		}
	}
	return nil
}

// tokenChars splits text into the characters of FTS5's trigram tokenizer
// (fts5_tokenize.c): a byte from 0xC0 up starts a character that takes
// every continuation byte (0x80 to 0xBF) after it; any other byte is a
// character of its own. This is UTF-8 where text is, and decides the
// split the tokenizer's way where it is not. NUL characters are skipped,
// as the tokenizer skips them. fn gets each character's bytes.
func tokenChars(text []byte, fn func(ch []byte)) {
	for i := 0; i < len(text); {
		j := i + 1
		if text[i] >= 0xc0 {
			for j < len(text) && text[j]&0xc0 == 0x80 {
				j++
			}
		}
		if text[i] != 0 {
			fn(text[i:j])
		}
		i = j
	}
}

// trigrams returns how many tokens the trigram tokenizer makes of text.
func trigrams(text []byte) int {
	n := 0
	tokenChars(text, func([]byte) { n++ })
	return max(n-2, 0)
}

// distinctTrigrams returns the trigrams of text, each once, as the text of
// three characters (the tokenizer folds case; so does a query).
func distinctTrigrams(text []byte) []string {
	var chars [][]byte
	tokenChars(text, func(ch []byte) { chars = append(chars, ch) })
	seen := map[string]bool{}
	var out []string
	for i := 0; i+3 <= len(chars); i++ {
		t := string(slices.Concat(chars[i], chars[i+1], chars[i+2]))
		if k := strings.ToLower(t); !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
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
