//go:build unix

package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
)

// TestRefusesSpecialSideFiles puts a named pipe or a folder where a
// database's -wal or -shm file goes, beside a new file and beside a
// database: Open refuses it with a *sessiontree.NotRegularFileError naming
// that file, before SQLite opens anything, and leaves the database as it
// was. SQLite failed with an I/O error naming neither ("disk I/O error",
// "unable to open database file"), or, for a pipe as the -wal file,
// committed into the pipe: what a crash then left of those commits was
// gone.
func TestRefusesSpecialSideFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	template, _ := damageTemplate(t)
	makers := map[string]func(string) error{
		"named pipe": func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"directory":  func(p string) error { return os.Mkdir(p, 0o700) },
	}
	for kind, make := range makers {
		for _, side := range []string{"-wal", "-shm"} {
			for _, existing := range []bool{true, false} {
				dir := t.TempDir()
				path := filepath.Join(dir, "s.db")
				if existing {
					copyFile(t, template, path)
				}
				if err := make(path + side); err != nil {
					t.Fatal(err)
				}
				before, _ := os.ReadFile(path)
				db, err := engine.Open(ctx, path, engine.Options{})
				if err == nil {
					db.Close()
				}
				var nr *sessiontree.NotRegularFileError
				if !errors.As(err, &nr) || nr.Path != path+side || !strings.Contains(err.Error(), side+" file") {
					t.Errorf("Open beside a %s as its %s file (database there: %v) = %v; want a NotRegularFileError naming it", kind, side, existing, err)
				}
				if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
					t.Errorf("Open beside a %s as its %s file (database there: %v) changed the database file", kind, side, existing)
				}
			}
		}
	}
}
