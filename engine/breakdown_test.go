package engine

import (
	"database/sql"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// tenth is 0.1, a variable so that tenth+tenth*2 is a float64 sum,
// 0.30000000000000004.
var tenth = 0.1

// breakdownCases are buckets whose keys need escapes or none, and costs
// whose digits matter: a sum that is not its shortest decimal, tiny,
// huge and infinite. (A sum, starting from +0, is never -0.)
var breakdownCases = [][]bucket{
	nil,
	{{key: "anthropic/claude-sonnet-4", firstSeq: 2, tokens: 6510, cost: 0.0123}},
	{
		{key: sessiontree.ToolsBucket, firstSeq: 1, tokens: 0, cost: 0},
		{key: `q"uote\/模型` + "\u2028\x01<&>", firstSeq: 1 << 31, tokens: math.MaxInt64, cost: tenth + tenth*2},
		{key: "", firstSeq: 3, tokens: -5, cost: 5e-324},
		{key: "undefined/undefined", firstSeq: 4, tokens: 1, cost: 1.0},
		{key: "a/b", firstSeq: 5, tokens: 1, cost: math.MaxFloat64},
		{key: "a/inf", firstSeq: 6, tokens: 1, cost: math.Inf(1)},
		{key: "a/-inf", firstSeq: 7, tokens: 1, cost: math.Inf(-1)},
		{key: "a/e", firstSeq: 8, tokens: 1, cost: 1e21},
	},
}

// sameBuckets compares buckets bit for bit (== would take -0 for 0).
func sameBuckets(a, b []bucket) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.key != y.key || x.firstSeq != y.firstSeq || x.tokens != y.tokens ||
			math.Float64bits(x.cost) != math.Float64bits(y.cost) {
			return false
		}
	}
	return true
}

// TestBreakdownRoundTrip writes buckets as the usage_buckets column and
// reads them back exactly, and reads what SQLite's JSON functions write
// for the same buckets (as migration 9 does) exactly too.
func TestBreakdownRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 9))
	random := make([]bucket, 200)
	for i := range random {
		sum := 0.0
		for range r.IntN(40) {
			sum += float64(r.IntN(1e6)) / 1e7
		}
		random[i] = bucket{key: strconv.Itoa(i), firstSeq: int64(i + 1), tokens: r.Int64(), cost: sum}
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, want := range append(breakdownCases, random) {
		text := appendBreakdown(nil, want)
		got, err := parseBreakdown(text)
		if err != nil || !sameBuckets(got, want) {
			t.Errorf("parseBreakdown(%s) = %+v, %v; want %+v", text, got, err, want)
		}
		var fromSQL []byte
		err = db.QueryRow(`SELECT CAST(json_group_array(json_object('bucket', b.value ->> '$.bucket',
		    'first_seq', b.value ->> '$.first_seq', 'tokens', b.value ->> '$.tokens', 'cost', b.value ->> '$.cost'))
		    AS BLOB) FROM json_each(?1) AS b`, string(text)).Scan(&fromSQL)
		if err != nil {
			t.Fatal(err)
		}
		got, err = parseBreakdown(fromSQL)
		if err != nil || !sameBuckets(got, want) {
			t.Errorf("parseBreakdown(%s) (SQLite's JSON of %s) = %+v, %v; want %+v", fromSQL, text, got, err, want)
		}
	}
}

// TestBreakdownRefused reads columns that are not a breakdown: each is
// an ErrCorrupt.
func TestBreakdownRefused(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		``, `{`, `{}`, `null`, `[1]`, `[{}]`, `[[]]`,
		`[{"bucket":"a","first_seq":1,"tokens":2}]`,
		`[{"bucket":1,"first_seq":1,"tokens":2,"cost":0}]`,
		`[{"bucket":"a","first_seq":1.5,"tokens":2,"cost":0}]`,
		`[{"bucket":"a","first_seq":1,"tokens":"2","cost":0}]`,
		`[{"bucket":"a","first_seq":1,"tokens":2,"cost":"0.1"}]`,
		`[{"bucket":"a","first_seq":1,"tokens":2,"cost":0}] x`,
	} {
		if got, err := parseBreakdown([]byte(text)); !errors.Is(err, sessiontree.ErrCorrupt) {
			t.Errorf("parseBreakdown(%q) = %+v, %v; want ErrCorrupt", text, got, err)
		}
	}
}
