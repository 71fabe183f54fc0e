package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// ModelHarness tells [RunModel] how to drive one backend. New and Reopen
// are required; the rest are optional, and the operations that need them
// are not drawn without them.
type ModelHarness struct {
	// New returns a fresh, empty, writable session whose claims (when it
	// is a [sessiontree.Claimer]) run on the clock now.
	New func(t testing.TB, now func() time.Time) sessiontree.Storage
	// Reopen closes st and opens its session again, as [Harness.Reopen],
	// its claims on the clock now.
	Reopen func(t testing.TB, st sessiontree.Storage, now func() time.Time) sessiontree.Storage
	// Other opens st's session again through another handle on its
	// database (another pool of connections, as another process would),
	// its claims on the clock now; it stays open beside st.
	Other func(t testing.TB, st sessiontree.Storage, now func() time.Time) sessiontree.Storage
	// NoNUL says the backend refuses an entry whose id, provider or
	// model holds a NUL (PostgreSQL, whose text cannot hold one: the
	// README's rule); the run then draws none.
	NoNUL bool
	// DB gives the database of st's session, for an engine: the run then
	// deletes the session (without a claim), checks it with the
	// database's Check and compares its usage reports (the database holds
	// that session alone).
	DB func(st sessiontree.Storage) ModelDB
	// Recreate makes a new, empty session with meta's id in the database
	// st's session was deleted from (with DB).
	Recreate func(t testing.TB, st sessiontree.Storage, meta sessiontree.SessionMeta) sessiontree.Storage
	// Check checks what a backend without DB stores of st's session
	// (nil when sound).
	Check func(ctx context.Context, st sessiontree.Storage) error
}

// ModelDB is what [RunModel] uses of an engine's database
// ([sessiontree.Database]'s methods of the same names).
type ModelDB interface {
	DeleteSession(ctx context.Context, id string, opts sessiontree.DeleteOptions) error
	Check(ctx context.Context, id string) error
	Usage(ctx context.Context, q sessiontree.UsageQuery) (sessiontree.UsageReport, error)
}

// sessionID is the id of a database's session.
func sessionID(st sessiontree.Storage) string { return st.(interface{ ID() string }).ID() }

// ModelSeedsEnv names the environment variable that sets how many random
// sequences [RunModel] runs (a long run: thousands); ModelFirstSeedEnv,
// the first seed; ModelStepsEnv, how many steps each has.
const (
	ModelSeedsEnv     = "SESSIONTREE_MODEL_SEEDS"
	ModelFirstSeedEnv = "SESSIONTREE_MODEL_SEED"
	ModelStepsEnv     = "SESSIONTREE_MODEL_STEPS"
)

// RunModel drives random sequences of API calls (appends of every entry
// type pi writes and of unknown ones, batches, guarded writes right and
// stale, leaf moves, branch summaries, compactions, labels, names, context
// edits, claims with their clock, close and reopen, delete and re-create)
// against the backend h drives and against a reference model: the log as
// a list, its leaf, and every answer computed by the root package's own
// rules over it. After each step it compares every read (leaf, name,
// labels, stats, summary, log and heads, entries, paths, state, context
// and projection, usage, the backend's check) with the model's. On the
// first difference it shrinks the sequence, dropping steps while it still
// fails, and reports the shortest with each step's trace. seeds sequences
// of up to steps operations run; [ModelSeedsEnv] and [ModelStepsEnv]
// override them.
func RunModel(t *testing.T, h ModelHarness, seeds, steps int) {
	first := uint64(0)
	if n, err := strconv.Atoi(os.Getenv(ModelSeedsEnv)); err == nil && n > 0 {
		seeds = n
	}
	if n, err := strconv.ParseUint(os.Getenv(ModelFirstSeedEnv), 10, 64); err == nil {
		first = n
	}
	if n, err := strconv.Atoi(os.Getenv(ModelStepsEnv)); err == nil && n > 0 {
		steps = n
	}
	for seed := first; seed < first+uint64(seeds); seed++ {
		ops := randomOps(rand.New(rand.NewPCG(seed, 11)), steps, h)
		failed := false
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			if _, err := runOps(t, h, ops, nil); err != nil {
				failed = true
				short := shrinkOps(t, h, ops)
				var trace []string
				_, err = runOps(t, h, short, &trace)
				t.Fatalf("seed %d: %d of %d steps still fail:\n%s\n%v", seed, len(short), len(ops),
					strings.Join(trace, "\n"), err)
			}
		})
		if failed {
			return // one shrunk sequence is enough to read
		}
	}
}

// runOps runs ops on a fresh session of h and returns how many ran and
// the first difference from the model; trace, when not nil, gets a line
// per step.
func runOps(t testing.TB, h ModelHarness, ops []op, trace *[]string) (int, error) {
	t.Helper()
	r := newModelRun(t, h)
	defer r.closeAll()
	if err := r.compare(); err != nil {
		return 0, fmt.Errorf("before any step: %w", err)
	}
	for i, o := range ops {
		what, err := r.step(o)
		if trace != nil {
			*trace = append(*trace, fmt.Sprintf("%3d. %s", i+1, what))
		}
		if err == nil {
			err = r.compare()
		}
		if err != nil {
			return i, fmt.Errorf("step %d (%s): %w", i+1, what, err)
		}
	}
	return len(ops), nil
}

// shrinkOps returns a shorter sequence of ops that still fails: it cuts
// what follows the failing step, then drops chunks of steps, halving
// their size, while the rest still fails.
func shrinkOps(t testing.TB, h ModelHarness, ops []op) []op {
	t.Helper()
	n, err := runOps(t, h, ops, nil)
	if err == nil {
		return ops // flaky: keep the whole sequence
	}
	ops = ops[:n+1]
	for size := len(ops) / 2; size >= 1; size /= 2 {
		for i := 0; i+size <= len(ops); {
			try := append(append([]op(nil), ops[:i]...), ops[i+size:]...)
			if n, err := runOps(t, h, try, nil); err != nil {
				ops = try[:n+1]
				continue
			}
			i += size
		}
	}
	return ops
}

// modelClock is the clock the claims of a run's sessions run on, moved by
// the run's steps.
type modelClock struct{ fakeClock }

func newModelClock() *modelClock {
	return &modelClock{fakeClock{t: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)}}
}
