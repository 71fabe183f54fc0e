package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestStartProfile checks that $SESSIONTREE_CPUPROFILE writes a profile, and that a path it cannot create is reported without
// stopping the command.
func TestStartProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.out")
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == cpuProfileEnv {
				return v
			}
			return ""
		}
	}
	var stderr bytes.Buffer
	startProfile(env(path), &stderr)()
	b, err := os.ReadFile(path)
	// A profile is a gzipped protocol buffer.
	if err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) || stderr.Len() != 0 {
		t.Fatalf("profile: %d bytes, %v, stderr %q; want a gzipped profile", len(b), err, stderr.String())
	}
	startProfile(env(filepath.Join(t.TempDir(), "missing", "cpu.out")), &stderr)()
	if !bytes.Contains(stderr.Bytes(), []byte(cpuProfileEnv)) {
		t.Errorf("stderr = %q; want the variable named", stderr.String())
	}
	stderr.Reset()
	startProfile(env(""), &stderr)()
	if stderr.Len() != 0 {
		t.Errorf("unset: stderr = %q; want nothing", stderr.String())
	}
}
