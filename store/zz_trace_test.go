package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/store"
)

func TestZZFolderTrace(t *testing.T) {
	list := os.Getenv("ZZ_FILES")
	if list == "" {
		t.Skip()
	}
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(string(b))
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "x.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Import(ctx, files, store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d entries in %v", rep.Entries, rep.Duration)
}
