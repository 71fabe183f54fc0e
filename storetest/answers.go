package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// SessionAnswers are what the reads of one session answer.
type SessionAnswers struct {
	Meta    sessiontree.SessionMeta
	Name    string
	Leaf    string
	Labels  map[string]string
	Stats   sessiontree.Stats
	Summary sessiontree.Summary
	Outline []sessiontree.OutlineEntry
	Path    []sessiontree.Entry
	State   sessiontree.State
	Log     []sessiontree.Entry
}

// Answers are what the reads of a database's sessions answer, by id,
// and its usage reports by model and by day: to compare a database
// migrated from an older schema, or whose derived values were computed
// again, with a fresh import of the same files.
type Answers struct {
	Sessions map[string]SessionAnswers
	ByModel  sessiontree.UsageReport
	ByDay    sessiontree.UsageReport
}

// AnswersDiff is cmp.Diff(want, got): "" when they are alike, else what
// differs. Answers alike by reflect.DeepEqual are alike to cmp, and
// DeepEqual finds it a tenth of the time: cmp.Diff of the whole corpus's
// answers was three quarters of TestDerivedRedoOfEverySession's CPU under
// the race detector.
func AnswersDiff(want, got Answers) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got)
}

// ReadAnswers reads the Answers of db for the sessions ids. The summary
// and outline are read where the storage keeps them (SummaryReader,
// OutlineReader).
func ReadAnswers(t testing.TB, db sessiontree.Database, ids []string) Answers {
	t.Helper()
	a, err := readAnswers(context.Background(), db, ids)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// readAnswers is ReadAnswers returning the first read's failure.
func readAnswers(ctx context.Context, db sessiontree.Database, ids []string) (Answers, error) {
	a := Answers{Sessions: map[string]SessionAnswers{}}
	for _, id := range ids {
		st, err := db.OpenSession(ctx, id)
		if err != nil {
			return a, fmt.Errorf("%s: %w", id, err)
		}
		s, err := sessionAnswers(ctx, st)
		if err != nil {
			return a, fmt.Errorf("%s: %w", id, err)
		}
		a.Sessions[id] = s
	}
	var err1, err2 error
	a.ByModel, err1 = db.Usage(ctx, sessiontree.UsageQuery{By: sessiontree.UsageByModel})
	a.ByDay, err2 = db.Usage(ctx, sessiontree.UsageQuery{By: sessiontree.UsageByDay})
	return a, errors.Join(err1, err2)
}

// sessionAnswers reads st's SessionAnswers.
func sessionAnswers(ctx context.Context, st sessiontree.DatabaseSession) (SessionAnswers, error) {
	var a SessionAnswers
	var errs [10]error
	a.Meta, errs[0] = st.Meta(ctx)
	a.Name, errs[1] = st.Name(ctx)
	a.Leaf, errs[2] = st.Leaf(ctx)
	a.Labels, errs[3] = st.Labels(ctx)
	a.Stats, errs[4] = st.Stats(ctx)
	if sr, ok := st.(sessiontree.SummaryReader); ok {
		a.Summary, errs[5] = sr.Summary(ctx)
	}
	if or, ok := st.(sessiontree.OutlineReader); ok {
		a.Outline, errs[6] = or.Outline(ctx)
	}
	if a.Leaf != "" {
		a.Path, errs[7] = st.Path(ctx, a.Leaf)
		a.State, errs[8] = st.State(ctx, a.Leaf)
	}
	a.Log, errs[9] = st.Log(ctx, 0, 0)
	return a, errors.Join(errs[:]...)
}

// ImportLenient imports the pi session file at path as pi reads it, its
// bad lines skipped, into db as a new session with one batch, and returns
// the session's id: "" for a file without a header, or whose batch the
// database refuses (testdata/piedge holds logs pi reads and a database
// refuses).
func ImportLenient(t testing.TB, db sessiontree.Database, path string) string {
	t.Helper()
	var meta *sessiontree.SessionMeta
	var entries []sessiontree.Entry
	for rec, err := range jsonl.ReadFile(context.Background(), path, jsonl.ReadOptions{Mode: jsonl.Lenient}) {
		switch {
		case err != nil:
		case rec.Kind == jsonl.KindHeader:
			meta = &rec.Header.SessionMeta
		case rec.Kind == jsonl.KindEntry:
			entries = append(entries, rec.Entry)
		}
	}
	if meta == nil {
		return ""
	}
	ctx := context.Background()
	err := db.Update(ctx, func(tx sessiontree.DatabaseTx) error {
		_, err := tx.NewSession(*meta, nil)
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	st, err := db.OpenSession(ctx, meta.ID)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := st.AppendBatch(ctx, entries); err != nil {
		return ""
	}
	return meta.ID
}
