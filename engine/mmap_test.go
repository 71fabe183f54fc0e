//go:build unix

package engine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sessiontree/sessiontree/engine"
)

func TestCatchFaultsOfAMappedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 1<<16), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, 1<<16, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	var sum byte
	err = engine.CatchFaults(func() error { sum += m[1<<15]; return nil })
	var fe *engine.FaultError
	if !errors.As(err, &fe) || fe.Addr == 0 {
		t.Fatalf("reading a page cut from the file: %v (%d); want a *engine.FaultError", err, sum)
	}
}

func TestCatchFaultsLetsANilDereferencePanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a nil dereference under CatchFaults did not panic")
		}
	}()
	var p *int
	_ = engine.CatchFaults(func() error { return fmt.Errorf("%d", *p) })
}
