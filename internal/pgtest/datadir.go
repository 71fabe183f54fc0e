package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// initdbArgs are initdb's options after -D: how every cluster is made.
var initdbArgs = []string{"-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"}

// userCacheDir is os.UserCacheDir; a test seam.
var userCacheDir = os.UserCacheDir

// initData fills data, a new cluster's folder, with a copy of the
// template cluster (see [templateDir]); the first cluster of a
// machine, user and server version runs initdb and keeps a copy of its
// folder, before its server starts, as the template. Copying the folder
// is a fraction of initdb's time (initdb starts the server program
// several times). initData reports whether data came from the template.
func (c *Cluster) initData(ctx context.Context, data string) (copied bool, err error) {
	tmpl := templateDir(c.bin)
	if tmpl != "" {
		if _, err := os.Stat(tmpl); err == nil {
			if err := copyData(tmpl, data); err == nil {
				return true, nil
			}
			_ = os.RemoveAll(data) // a template made unreadable: initdb instead
		}
	}
	if err := c.run(ctx, "initdb", append([]string{"-D", data}, initdbArgs...)...); err != nil {
		return false, err
	}
	if tmpl != "" {
		keepTemplate(data, tmpl)
	}
	return false, nil
}

// templateDir is where the template cluster of the server programs in
// bin is kept: under the user's cache folder, named by a hash of bin,
// its server program's size and time (another version of the server
// gets another template) and initdbArgs. "" when there is no cache folder.
func templateDir(bin string) string {
	cache, err := userCacheDir()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(filepath.Join(bin, "postgres"))
	if err != nil {
		return ""
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%s", bin, fi.Size(), fi.ModTime().UnixNano(), strings.Join(initdbArgs, "\x00")))
	return filepath.Join(cache, "sessiontree-pgtest", hex.EncodeToString(h[:8]))
}

// keepTemplate copies data, a cluster's folder fresh from initdb, to
// tmpl, all at once: the copy is made beside tmpl and renamed, so a
// reader sees a whole template or none. When another test binary kept
// one first, this copy is dropped. Failing only costs the next cluster
// an initdb, so errors are not reported.
func keepTemplate(data, tmpl string) {
	if err := os.MkdirAll(filepath.Dir(tmpl), 0o700); err != nil {
		return
	}
	stage, err := os.MkdirTemp(filepath.Dir(tmpl), "new-")
	if err != nil {
		return
	}
	defer os.RemoveAll(stage)
	if os.CopyFS(filepath.Join(stage, "data"), os.DirFS(data)) == nil {
		_ = os.Rename(filepath.Join(stage, "data"), tmpl)
	}
}

// copyData copies the template tmpl to data, owned by the user the
// server runs as; data is private to that user, as the server wants its
// data folder.
func copyData(tmpl, data string) error {
	if err := os.CopyFS(data, os.DirFS(tmpl)); err != nil {
		return fmt.Errorf("copy the template cluster: %w", err)
	}
	if err := os.Chmod(data, 0o700); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := serverUser()
	if err != nil {
		return err
	}
	return filepath.WalkDir(data, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}
