-- Search folds case as the SQLite engine's index does
-- (sessiontree.FoldRune, FTS5's folding), no longer by Go's
-- strings.ToLower (0004_search.sql): both engines find the same text
-- for a query. search_text.folded of a text holding a character the two
-- fold otherwise (µ, ς, İ, ſ, Greek symbol letters, Cherokee, Georgian
-- Mtavruli, ...) no longer matches its body folded, which Check reports.
--
-- The sessions holding such a text are indexed again: their rows of
-- search_text are deleted and their marks reset, and the index catch-up
-- (store.Index: a chunk at a time, each its own transaction, resuming
-- at the marks) writes them folded anew. Until then a search reads their
-- entries as pending, and says how many it left unread. The other
-- sessions, most of them, keep their rows: a text none of whose
-- characters is in the class below is folded alike by both rules. This
-- reads every body once.
--
-- The class is the characters c beyond ASCII where FoldRune(c) is not
-- unicode.ToLower(c), as of this migration (pgengine's
-- TestRefoldClassIsFoldRunes holds it to them).
WITH refold AS (
    SELECT DISTINCT session FROM search_text WHERE body ~ ('[' ||
    '\u00b5\u0130\u017f\u0345\u037f\u03c2\u03d0-\u03d1\u03d5-\u03d6' ||
    '\u03f0-\u03f1\u03f5\u0528\u052a\u052c\u052e\u13a0-\u13f5' ||
    '\u1c90-\u1cba\u1cbd-\u1cbf\u1e9b\u1fbe\u2c2f\ua698\ua69a\ua796' ||
    '\ua798\ua79a\ua79c\ua79e\ua7ab-\ua7ae\ua7b0-\ua7b4\ua7b6\ua7b8' ||
    '\ua7ba\ua7bc\ua7be\ua7c0\ua7c2\ua7c4-\ua7c7\ua7c9\ua7d0\ua7d6' ||
    '\ua7d8\ua7f5\ufffe-\uffff\U000104b0-\U000104d3' ||
    '\U00010570-\U0001057a\U0001057c-\U0001058a\U0001058c-\U00010592' ||
    '\U00010594-\U00010595\U00010c80-\U00010cb2\U000118a0-\U000118bf' ||
    '\U00016e40-\U00016e5f\U0001e900-\U0001e921' || ']')
), gone AS (
    DELETE FROM search_text t USING refold r WHERE t.session = r.session
)
UPDATE sessions s SET indexed_count = 0 FROM refold r WHERE s.pk = r.session;
