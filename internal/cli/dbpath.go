package cli

import (
	"errors"
	"fmt"
	"path/filepath"
)

// DBEnv is the environment [DefaultDBPath] reads: a way to look up
// variables, the user's home directory and the operating system. It is a
// struct so tests can give a fake one.
type DBEnv struct {
	// Getenv looks up an environment variable ("" when unset).
	Getenv func(string) string
	// Home returns the user's home directory (os.UserHomeDir).
	Home func() (string, error)
	// GOOS is the operating system (runtime.GOOS).
	GOOS string
}

// DBFile and DBDir name the default database: DBDir inside the user's data
// directory, DBFile inside that.
const (
	DBDir  = "sessiontree"
	DBFile = "sessions.db"
)

// DefaultDBPath returns the database used when --db is not given:
// $SESSIONTREE_DB when set; otherwise sessions.db in a "sessiontree"
// folder of the user's data directory, which is $XDG_DATA_HOME (when set to
// an absolute path, as the XDG base directory specification requires) or
// ~/.local/share on Linux and other Unix systems, ~/Library/Application
// Support on macOS and %LocalAppData% on Windows. It creates nothing.
func DefaultDBPath(env DBEnv) (string, error) {
	if p := env.Getenv("SESSIONTREE_DB"); p != "" {
		return p, nil
	}
	if x := env.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) && env.GOOS != "windows" && env.GOOS != "darwin" {
		return filepath.Join(x, DBDir, DBFile), nil
	}
	if env.GOOS == "windows" {
		if d := env.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, DBDir, DBFile), nil
		}
	}
	home, err := env.Home()
	if err == nil && home == "" {
		err = errors.New("no home directory")
	}
	if err != nil {
		return "", fmt.Errorf("default database path: %w (set SESSIONTREE_DB or pass --db)", err)
	}
	switch env.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", DBDir, DBFile), nil
	case "windows":
		return filepath.Join(home, "AppData", "Local", DBDir, DBFile), nil
	}
	return filepath.Join(home, ".local", "share", DBDir, DBFile), nil
}
