// Package storetest is the conformance suite every [sessiontree.Storage]
// backend runs: the behaviour of DESIGN.md, written once. A backend's test
// calls [Run] with a [Harness] that says how to make, reopen and corrupt a
// session of that backend, and [RunPiFixtures] to check it against the
// answers the real pi agent gave for the files in testdata/pi and
// testdata/pi1.
//
// It owns the cases every backend must pass, and the shared suites of
// what only some backends do: writer claims ([RunClaims]) and following a
// session as it grows ([RunFollow], [RunFollowClosed], with the writer
// [AppendSteps]). It owns no backend and no fixture file: the fixtures
// are testdata's, the backends their packages'.
//
// Someone writing a fourth backend runs the same suite:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{New: ..., Reopen: ..., LoadUnchecked: ...})
//	}
package storetest
