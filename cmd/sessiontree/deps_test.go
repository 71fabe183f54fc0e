package main

import (
	"os/exec"
	"strings"
	"testing"
)

// costlyInit are import path prefixes of packages the command must not
// link: Go runs every linked package's init when the process starts,
// whichever command it runs, and these spend start-up time (symbol
// tables, fonts, character maps, image codecs) on what no command needs
// (issue 17 item 1). gonum.org/v1/plot, which drew the usage chart until
// view drew it itself, brought them all in.
var costlyInit = []string{
	"gonum.org/",
	"codeberg.org/go-latex/",
	"codeberg.org/go-fonts/",
	"golang.org/x/image/",
	"golang.org/x/text/encoding",
	"github.com/ajstarks/svgo",
}

// TestStartupDependencies lists the command's dependencies with `go list
// -deps` and checks that none has a costly init.
func TestStartupDependencies(t *testing.T) {
	t.Parallel()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the dependencies with: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 || !strings.Contains(string(out), "\ngithub.com/spf13/cobra\n") {
		t.Fatalf("go list -deps listed %d packages, without cobra; want the command's dependencies:\n%s", len(deps), out)
	}
	for _, d := range deps {
		for _, p := range costlyInit {
			if strings.HasPrefix(d, p) {
				t.Errorf("sessiontree links %s; want none of %s (its init runs in every command)", d, p)
			}
		}
	}
}
