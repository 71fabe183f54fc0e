package storetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
)

// OlderRulesHarness says how RunOlderRules opens a database engine's
// database and writes to it behind the engine's back.
type OlderRulesHarness struct {
	// Dir is testdata/olderrules.
	Dir string
	// Open opens the database, made by the first call, and returns it
	// with the function that closes it.
	Open func(t *testing.T) (sessiontree.Database, func())
	// Exec runs statements on the closed database.
	Exec func(t *testing.T, stmts ...string)
	// Forget takes the closed database back to before the migration
	// that computes again what older engines derived by older rules, so
	// that the next Open applies it.
	Forget func(t *testing.T)
	// OlderBreakdown is the sessions row's usage_buckets an older engine
	// kept for usage.jsonl (testdata/olderrules/README.md).
	OlderBreakdown string
}

// olderRules are the files of testdata/olderrules, and the statements
// that put back in each file's session (?1, its key) what an older
// engine stored for it, the same on both engines ('?B' is the older
// breakdown).
var olderRules = map[string][]string{
	"names":          {"UPDATE sessions SET name = '\ufeffmy name' WHERE pk = ?1"},
	"labels":         {`DELETE FROM labels WHERE session = ?1`},
	"labels-escaped": {`DELETE FROM labels WHERE session = ?1`},
	"usage": {
		`UPDATE usage_days SET bucket = CASE bucket WHEN '/m' THEN 'undefined/m' WHEN 'p/' THEN 'p/m'
			WHEN '5/null' THEN 'undefined/undefined' END WHERE session = ?1`,
		`INSERT INTO usage_days VALUES ('2026-12-04', ?1, 'p/m', 2000000000, 1, 0, 0, 1.0)`,
		`UPDATE sessions SET input_tokens = input_tokens + 2000000000, output_tokens = output_tokens + 1,
			cost = cost + 1, usage_buckets = '?B' WHERE pk = ?1`,
	},
}

// RunOlderRules builds a database as an older engine left it: the
// sessions of testdata/olderrules, each with what the engine derived from
// its entries written over by what an older engine derived by rules since
// fixed. It shows Check reporting each session corrupt and the answers
// (name, labels, stats, summary, usage by model and by day) differing
// from a fresh import's, then, once the migration is applied again,
// Check clean and the answers the fresh import's.
func RunOlderRules(t *testing.T, h OlderRulesHarness) {
	ctx := context.Background()
	db, closeDB := h.Open(t)
	ids := map[string]string{}
	for file := range olderRules {
		ids[file] = importOlderRules(t, db, filepath.Join(h.Dir, file+".jsonl"))
	}
	fresh := derivedAnswers(t, db, ids)
	closeDB()

	var stmts []string
	for file, id := range ids {
		for _, stmt := range olderRules[file] {
			stmt = strings.ReplaceAll(stmt, "?B", h.OlderBreakdown)
			stmts = append(stmts, strings.ReplaceAll(stmt, "?1", "(SELECT pk FROM sessions WHERE id = '"+id+"')"))
		}
	}
	h.Exec(t, stmts...)
	older, closeOlder := h.Open(t)
	for file, id := range ids {
		if err := older.Check(ctx, id); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("Check(%s) with the older values = %v; want corrupt", file, err)
		}
	}
	if cmp.Equal(fresh, derivedAnswers(t, older, ids)) {
		t.Error("the older values answer as a fresh import")
	}
	closeOlder()

	h.Forget(t)
	upgraded, closeUpgraded := h.Open(t)
	defer closeUpgraded()
	if err := upgraded.Check(ctx, ""); err != nil {
		t.Errorf("Check() after the migration = %v", err)
	}
	if diff := cmp.Diff(fresh, derivedAnswers(t, upgraded, ids)); diff != "" {
		t.Errorf("answers after the migration (-fresh import +upgraded):\n%s", diff)
	}
	if fresh.Names["names"] != "my name\u0085" || len(fresh.Labels["labels"]) != 2 || fresh.Labels["labels-escaped"]["u1"] != "true" {
		t.Errorf("fresh import: name %q, labels %v; want the new rules' (testdata/olderrules/README.md)",
			fresh.Names["names"], fresh.Labels)
	}
}

// importOlderRules stores the entries of the file at path (entries only,
// one per line) as a new session of db and returns its id.
func importOlderRules(t *testing.T, db sessiontree.Database, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log []sessiontree.Entry
	for line := range strings.Lines(string(b)) {
		e, err := sessiontree.DecodeEntry([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		log = append(log, e)
	}
	ctx := context.Background()
	var id string
	err = db.Update(ctx, func(tx sessiontree.DatabaseTx) error {
		st, err := tx.NewSession(sessiontree.SessionMeta{Cwd: "/w"}, nil)
		if err == nil {
			id = st.ID()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.OpenSession(ctx, id)
	if err == nil {
		err = st.AppendBatch(ctx, log)
	}
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// olderRulesAnswers are what the derived values of RunOlderRules'
// sessions answer, by file.
type olderRulesAnswers struct {
	Names     map[string]string
	Labels    map[string]map[string]string
	Stats     map[string]sessiontree.Stats
	Summaries map[string]sessiontree.Summary
	ByModel   sessiontree.UsageReport
	ByDay     sessiontree.UsageReport
}

func derivedAnswers(t *testing.T, db sessiontree.Database, ids map[string]string) olderRulesAnswers {
	t.Helper()
	ctx := context.Background()
	a := olderRulesAnswers{Names: map[string]string{}, Labels: map[string]map[string]string{},
		Stats: map[string]sessiontree.Stats{}, Summaries: map[string]sessiontree.Summary{}}
	for file, id := range ids {
		st, err := db.OpenSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var errs [4]error
		a.Names[file], errs[0] = st.Name(ctx)
		a.Labels[file], errs[1] = st.Labels(ctx)
		a.Stats[file], errs[2] = st.Stats(ctx)
		if sr, ok := st.(sessiontree.SummaryReader); ok {
			a.Summaries[file], errs[3] = sr.Summary(ctx)
		}
		if err := errors.Join(errs[:]...); err != nil {
			t.Fatal(err)
		}
	}
	var err1, err2 error
	a.ByModel, err1 = db.Usage(ctx, sessiontree.UsageQuery{By: sessiontree.UsageByModel})
	a.ByDay, err2 = db.Usage(ctx, sessiontree.UsageQuery{})
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	return a
}
