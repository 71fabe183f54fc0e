package store_test

import (
	"path/filepath"
	"testing"

	"github.com/sessiontree/sessiontree/store"
)

// TestPiSessionsDirAsPi: the folder import reads by default is the one
// pi 1.6.0 writes to (dist/main.js and config.js): its
// PI_CODING_AGENT_SESSION_DIR first, else PI_CODING_AGENT_DIR's sessions
// folder, else ~/.pi/agent/sessions, each with a leading ~ expanded and a
// file:// URL read as its path, as pi's normalizePath does. A "~/..."
// value (quoted in a shell profile, say) was taken as a folder named ~
// below the working directory, and the session folder variable was not
// read at all: import found none of pi's sessions.
func TestPiSessionsDirAsPi(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, c := range []struct{ sessionDir, agentDir, want string }{
		{"", "", filepath.Join(home, ".pi", "agent", "sessions")},
		{"", "/srv/agent", "/srv/agent/sessions"},
		{"", "~/agent", filepath.Join(home, "agent", "sessions")},
		{"", "~", filepath.Join(home, "sessions")},
		{"/srv/pi-sessions", "/srv/agent", "/srv/pi-sessions"},
		{"~/pi-sessions", "", filepath.Join(home, "pi-sessions")},
		{"file:///srv/pi%20sessions", "", "/srv/pi sessions"},
	} {
		t.Setenv("PI_CODING_AGENT_SESSION_DIR", c.sessionDir)
		t.Setenv("PI_CODING_AGENT_DIR", c.agentDir)
		if got, err := store.PiSessionsDir(); err != nil || got != c.want {
			t.Errorf("session dir %q, agent dir %q: PiSessionsDir() = %q, %v; want %q", c.sessionDir, c.agentDir, got, err, c.want)
		}
	}
}
