package sessiontree_test

import (
	"testing"

	"github.com/sessiontree/sessiontree"
)

// BenchmarkAppendJSON is the client's JSON work of one append (issues 15
// and 17): building the entry and reading what the store keeps of it.
// "engine" is what the SQLite engine reads (its derive.go, without the
// canonical check, which reads only the head), "pgengine" what the
// PostgreSQL engine's append reads; "pass" times each reader on its own.
// Before the one-pass facts these were BuildEntry followed by the
// readers, each walking the JSON again (see the pass sub-benchmarks).
func BenchmarkAppendJSON(b *testing.B) {
	for _, name := range []string{"user", "assistant", "toolResult-100KB"} {
		d := draftOf(b, benchEntries[name])
		build := func() sessiontree.Entry {
			e, err := sessiontree.BuildEntry(d, "a1b2c3d4", "0f0e0d0c", "2026-01-05T09:00:01.234Z")
			if err != nil {
				b.Fatal(err)
			}
			return e
		}
		e := build()
		for _, bench := range []struct {
			name string
			fn   func()
		}{
			{"engine", func() { appendFacts(b, d) }},
			{"pgengine", func() { appendFacts(b, d) }},
			{"pass=BuildEntry", func() { build() }},
			{"pass=StatsOf", func() { sessiontree.StatsOf(e) }},
			{"pass=EffectsOf", func() { sessiontree.EffectsOf(e, "assistant") }},
			{"pass=Checksum", func() { sessiontree.EntryChecksum(e.Raw) }},
			{"pass=StateApply", func() { var st sessiontree.State; st.Apply(e) }},
			{"pass=TargetID", func() { _ = e.TargetID() }},
		} {
			b.Run(name+"/"+bench.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					bench.fn()
				}
			})
		}
	}
}

// appendFacts is what an append reads: the entry and its facts, in one
// pass.
func appendFacts(b *testing.B, d sessiontree.Draft) {
	if _, _, err := sessiontree.BuildEntryFacts(d, "a1b2c3d4", "0f0e0d0c", "2026-01-05T09:00:01.234Z"); err != nil {
		b.Fatal(err)
	}
}
