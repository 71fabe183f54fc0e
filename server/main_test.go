package server_test

import (
	"os"
	"testing"

	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// TestMain runs more tests at once than go test's default: the browser
// tests mostly wait for their Chromium, the others for their requests.
func TestMain(m *testing.M) {
	pgtest.WaitingParallel()
	os.Exit(m.Run())
}
