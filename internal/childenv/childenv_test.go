package childenv_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sessiontree/sessiontree/internal/childenv"
)

func TestEnv(t *testing.T) {
	tests := []struct {
		gorace, want string
	}{
		{"", "GORACE=atexit_sleep_ms=0"},
		{"halt_on_error=1", "GORACE=halt_on_error=1 atexit_sleep_ms=0"},
		{"atexit_sleep_ms=50", "GORACE=atexit_sleep_ms=50"},
	}
	for _, tt := range tests {
		t.Setenv("GORACE", tt.gorace)
		t.Setenv("HOME", "/home/childenv-test")
		env := childenv.Env("CHILD_JOB=x")
		var gorace []string
		for _, kv := range env {
			if strings.HasPrefix(kv, "GORACE=") {
				gorace = append(gorace, kv)
			}
		}
		if len(gorace) != 1 || gorace[0] != tt.want {
			t.Errorf("with GORACE=%q, Env() has %q; want only %q", tt.gorace, gorace, tt.want)
		}
		if env[len(env)-1] != "CHILD_JOB=x" {
			t.Errorf("Env(\"CHILD_JOB=x\") ends in %q; want the extra variable last", env[len(env)-1])
		}
		if !slices.Contains(env, "HOME=/home/childenv-test") {
			t.Errorf("Env() lost HOME; want the rest of the environment kept")
		}
	}
}
