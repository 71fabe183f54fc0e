package pgtest

import (
	"errors"
	"runtime"
	"testing"
)

// outcome records how URL ended a test: Fatalf or Skipf, each of which
// stops the test's goroutine as the real ones do.
type outcome struct {
	testing.TB
	failed, skipped bool
}

func (o *outcome) Helper()               {}
func (o *outcome) Fatalf(string, ...any) { o.failed = true; runtime.Goexit() }
func (o *outcome) Skipf(string, ...any)  { o.skipped = true; runtime.Goexit() }

// runURL calls URL on its own goroutine, which Fatalf or Skipf end.
func (o *outcome) runURL() *outcome {
	done := make(chan struct{})
	go func() {
		defer close(done)
		URL(o)
	}()
	<-done
	return o
}

// TestMissingServerFailsUnderCI: without a server a test is skipped, but
// under CI=true it fails.
func TestMissingServerFailsUnderCI(t *testing.T) {
	_, _ = server() // the server Main starts when first asked, before serverErr is replaced
	saved := serverErr
	defer func() { serverErr = saved }()
	serverErr = errors.New("no server here")
	for _, tt := range []struct {
		ci              string
		failed, skipped bool
	}{
		{"true", true, false},
		{"", false, true},
	} {
		t.Setenv("CI", tt.ci)
		got := (&outcome{}).runURL()
		if got.failed != tt.failed || got.skipped != tt.skipped {
			t.Errorf("CI=%q: failed %v, skipped %v; want failed %v, skipped %v", tt.ci, got.failed, got.skipped, tt.failed, tt.skipped)
		}
	}
}
