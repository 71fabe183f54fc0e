// Package storetest is the conformance suite every [sessiontree.Storage]
// backend runs: the behaviour of DESIGN.md, written once. A backend's test
// calls [Run] with a [Harness] that says how to make, reopen and corrupt a
// session of that backend, and [RunPiFixtures] to check it against the
// answers the real pi agent gave for the files in testdata/pi.
//
// Someone writing a fourth backend runs the same suite:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Harness{New: ..., Reopen: ..., LoadUnchecked: ...})
//	}
package storetest
