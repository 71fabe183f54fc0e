package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/jsonx"
)

// The cost breakdown is kept in the sessions row's usage_buckets column
// (see schema.sql), which every append writes anyway: a JSON array of the
// session's buckets in order of first use,
//
//	[{"bucket":"anthropic/m1","first_seq":7,"tokens":6510,"cost":0.0123}, ...]
//
// A table of its own (migration 9's first design) cost an append with
// usage one more page of the log, five instead of four; the array costs
// it a hundred bytes more in a page it writes already, and the write
// connection's remembered head holds the buckets, so an append neither
// reads nor parses them. BenchmarkAppend, 24 runs of each interleaved:
// 110 to 95 µs a median append (CPU 118 to 101 µs), 71 to 61 allocations;
// BenchmarkBatchImport unchanged. Migration 9 writes the same shape with
// SQLite's JSON functions.

// appendBreakdown appends buckets as the column's JSON. A cost is written
// in the fewest digits that read back as the same float64, so that the
// sums stay pi's to the last bit; an infinite sum (JSON has no infinity)
// as 1e999, which reads back as one.
func appendBreakdown(buf []byte, buckets []bucket) []byte {
	buf = append(buf, '[')
	for i, b := range buckets {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"bucket":`...)
		buf = appendKey(buf, b.key)
		buf = append(buf, `,"first_seq":`...)
		buf = strconv.AppendInt(buf, b.firstSeq, 10)
		buf = append(buf, `,"tokens":`...)
		buf = strconv.AppendInt(buf, b.tokens, 10)
		buf = append(buf, `,"cost":`...)
		switch {
		case math.IsInf(b.cost, 1):
			buf = append(buf, "1e999"...)
		case math.IsInf(b.cost, -1):
			buf = append(buf, "-1e999"...)
		default:
			buf = strconv.AppendFloat(buf, b.cost, 'g', -1, 64)
		}
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// appendKey appends a bucket key as a JSON string. Keys are provider and
// model names, printable ASCII as a rule, which need no escapes; any other
// goes through encoding/json (a key is valid UTF-8: jsonx.Unquote made it).
func appendKey(buf []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(key) // a string always marshals
			return append(buf, q...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, key...)
	return append(buf, '"')
}

// parseBreakdown reads the usage_buckets column; a column that is not what
// appendBreakdown or migration 9 writes is a sessiontree.CorruptError.
func parseBreakdown(text []byte) ([]bucket, error) {
	var out []bucket
	err := jsonx.ArrayElements(text, func(v []byte) error {
		var b bucket
		var seen int
		err := jsonx.ObjectMembers(v, func(k, v []byte) error {
			var err error
			switch {
			case jsonx.KeyEquals(k, "bucket"):
				b.key, err = jsonx.Unquote(v)
				seen |= 1
			case jsonx.KeyEquals(k, "first_seq"):
				b.firstSeq, err = strconv.ParseInt(string(v), 10, 64)
				seen |= 2
			case jsonx.KeyEquals(k, "tokens"):
				b.tokens, err = strconv.ParseInt(string(v), 10, 64)
				seen |= 4
			case jsonx.KeyEquals(k, "cost"):
				b.cost, err = parseCost(v)
				seen |= 8
			}
			return err
		})
		if err == nil && seen != 15 {
			err = errors.New("a bucket lacks a field")
		}
		out = append(out, b)
		return err
	})
	if err != nil {
		return nil, &sessiontree.CorruptError{Reason: fmt.Sprintf("usage_buckets %.200q: %v", text, err)}
	}
	return out, nil
}

// parseCost reads a JSON number as a float64; one too large for it (as
// appendBreakdown writes an infinite sum) reads as an infinity.
func parseCost(v []byte) (float64, error) {
	if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, fmt.Errorf("cost %s is not a number", v)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
		err = nil
	}
	return f, err
}
