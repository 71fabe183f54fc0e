package testdb_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree/internal/testdb"
)

// TestTemplate checks that the database is made once and each copy holds
// its bytes, mode 0600.
func TestTemplate(t *testing.T) {
	made := 0
	tmpl := testdb.New(func(_ context.Context, path string) error {
		made++
		return os.WriteFile(path, []byte("a database"), 0o644)
	})
	for i := range 3 {
		path := filepath.Join(t.TempDir(), "copy.db")
		tmpl.CopyTo(t, path)
		b, err := os.ReadFile(path)
		if err != nil || string(b) != "a database" {
			t.Fatalf("copy %d = %q, %v; want the template's bytes", i, b, err)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("copy %d has mode %v; want 0600", i, fi.Mode().Perm())
		}
	}
	if made != 1 {
		t.Errorf("the database was made %d times; want once", made)
	}
}
