package pipkg

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// ForTest returns node's path and the folder of pi release version for a
// test that drives pi, installing the release into the user's cache
// first when it is not there. Without node and npm, or when the install
// fails (a machine without the npm registry), tb is skipped; under
// CI=true, where the tests that drive pi must run, it fails instead.
func ForTest(tb testing.TB, version string) (node, pkgDir string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node, pkgDir, err := Ensure(ctx, "", version, true, tb.Logf)
	if err == nil {
		return node, pkgDir
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("CI=true and pi %s is not available: %v", version, err)
	}
	if errors.Is(err, ErrNoNode) {
		tb.Skipf("skipped outside CI: %v (under CI=true this test fails instead)", err)
	}
	tb.Skipf("skipped outside CI: pi %s could not be installed: %v (under CI=true this test fails instead)", version, err)
	return "", ""
}
