package pgtest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// newCluster returns a cluster value over a new folder owned by the
// server's user, without initialising it; the test is skipped (failed
// under CI=true) without PostgreSQL's programs.
func newCluster(t *testing.T) *Cluster {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		noServer(t, err)
	}
	c := &Cluster{dir: t.TempDir(), bin: bin}
	if err := c.ownFolder(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDataFromTemplate: once a cluster was made (Main's), the next
// cluster's folder is a copy of the template, which never ran a server:
// every folder and file of it, the folder private to its owner. (That the copy is the server's user's, the
// server checks as it starts on it: every test binary's cluster.)
func TestDataFromTemplate(t *testing.T) {
	c := newCluster(t)
	tmpl := templateDir(c.bin)
	if tmpl == "" {
		t.Skip("no user cache folder to keep a template in")
	}
	if _, err := os.Stat(filepath.Join(tmpl, "postmaster.pid")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the template holds postmaster.pid (%v): a server ran on it", err)
	}
	data := filepath.Join(c.dir, "data")
	copied, err := c.initData(context.Background(), data)
	if err != nil || !copied {
		t.Fatalf("initData = %v, %v; want a copy of the template", copied, err)
	}
	n := 0
	err = filepath.WalkDir(tmpl, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tmpl, p)
		want, _ := d.Info()
		got, err := os.Stat(filepath.Join(data, rel))
		switch {
		case err != nil:
			t.Errorf("copy lacks %s: %v", rel, err)
		case rel == "." && got.Mode().Perm() != 0o700:
			t.Errorf("the data folder has mode %v; want 0700", got.Mode().Perm())
		case got.IsDir() != d.IsDir() || !d.IsDir() && got.Size() != want.Size():
			t.Errorf("%s: %d bytes, folder %v; want %d, %v", rel, got.Size(), got.IsDir(), want.Size(), d.IsDir())
		}
		n++
		return nil
	})
	if err != nil || n < 100 {
		t.Errorf("walked %d entries of the template, %v; want a cluster's hundreds", n, err)
	}
}

// TestDamagedTemplateIsMadeAgain: a template whose copy does not start
// (damaged since it was kept) is replaced by initdb's, and the cluster
// starts.
func TestDamagedTemplateIsMadeAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs initdb")
	}
	cache := t.TempDir()
	saved := userCacheDir
	userCacheDir = func() (string, error) { return cache, nil }
	t.Cleanup(func() { userCacheDir = saved })
	bin, err := binDir()
	if err != nil {
		noServer(t, err)
	}
	tmpl := templateDir(bin)
	if err := os.MkdirAll(tmpl, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmpl, "PG_VERSION"), []byte("15\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Own(t)
	conn, err := pgx.Connect(context.Background(), c.URL)
	if err != nil {
		t.Fatalf("connect to the cluster started past a damaged template: %v", err)
	}
	conn.Close(context.Background())
	if _, err := os.Stat(filepath.Join(tmpl, "global", "pg_control")); err != nil {
		t.Errorf("the damaged template was not made again: %v", err)
	}
}
