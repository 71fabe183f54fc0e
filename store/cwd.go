package store

import (
	"fmt"
	"path/filepath"
)

// AbsCwd returns the folder p names as pi records a session's working
// directory, to compare with a session's cwd ([ListOptions.Cwd],
// [SearchOptions.Cwd]) or to record one: pi records Node's process.cwd(),
// the physical path, which names no symbolic link even when the shell
// reached the folder through one (and $PWD names the link). So p is made
// absolute and, when it exists here, its links are resolved; a folder
// that does not exist here (another machine's) is only made absolute.
func AbsCwd(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("cwd %s: %w", p, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}
