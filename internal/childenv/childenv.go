package childenv

import (
	"os"
	"strings"
)

// noExitSleep is the GORACE option that turns the sleep at exit off.
const noExitSleep = "atexit_sleep_ms=0"

// Env returns this process's environment with extra variables added
// ("NAME=value"), for a child process: GORACE gets atexit_sleep_ms=0
// added to the options it has, unless it sets atexit_sleep_ms itself.
// Without the race detector GORACE is not read, and changes nothing.
func Env(extra ...string) []string {
	env := os.Environ()
	opts := os.Getenv("GORACE")
	if !strings.Contains(opts, "atexit_sleep_ms=") {
		opts = strings.TrimSpace(opts + " " + noExitSleep)
	}
	out := make([]string, 0, len(env)+len(extra)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GORACE=") {
			out = append(out, kv)
		}
	}
	out = append(out, "GORACE="+opts)
	return append(out, extra...)
}
