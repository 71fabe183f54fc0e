//go:build unix && !linux

package reliability_test

import (
	"fmt"
	"runtime"
)

func mountTmpfs(string) error {
	return fmt.Errorf("the test mounts a tmpfs with Linux's mount(2), not on %s", runtime.GOOS)
}

func remountReadOnly(string) error { return mountTmpfs("") }

func unmount(string) {}

func bindReadOnly(string, string) error { return mountTmpfs("") }
