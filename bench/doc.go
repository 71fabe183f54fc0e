// Command bench measures every sessiontree backend side by side, and
// against the physical limit, on generated sessions of realistic shapes
// and growing sizes. See README.md for what each workload does and the
// latest results from a development machine.
//
//	go run ./bench                 # full run, < 5 minutes
//	go run ./bench -quick          # smoke test, < 30 seconds
//	go run ./bench -vs-pi          # also time pi 1.6.0's own loader (node, npm)
//	go run ./bench -pi-versions 1.6.0,0.73.1  # pi 1.6.0 and 0.73.1 side by side
//	go run ./bench -benchstat      # testing.B lines for benchstat
//
// Progress goes to stderr; the Markdown table (or benchstat lines) to
// stdout; results.json, results.md, results.benchstat.txt and one SVG
// chart per workload to -out.
//
// It owns its workloads, generated corpora and results (bench/results,
// bench/results-pi, README.md's tables), and the floor's database, the
// physical limit's own tables (floor.go, corpus.go); the backends it
// reads and writes through their public API only.
package main
