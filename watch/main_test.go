package watch_test

import (
	"os"
	"testing"

	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// TestMain runs more tests at once than go test's default: they mostly
// wait for the watcher (settle times, rescans, a server's restart).
func TestMain(m *testing.M) {
	pgtest.WaitingParallel()
	os.Exit(m.Run())
}
