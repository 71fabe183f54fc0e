package main

import (
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() { cobra.AddTemplateFunc("buildVersion", buildVersion) }

// buildVersion says what this binary was built from, as --version prints
// it: the module's version ("(devel)" for a build of a checkout), the
// commit and whether the tree had changes, when the build recorded them,
// and the Go release.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown build)"
	}
	parts := []string{bi.Main.Version}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		rev = "commit " + rev[:min(len(rev), 12)]
		if modified == "true" {
			rev += ", modified"
		}
		parts = append(parts, "("+rev+")")
	}
	return strings.Join(append(parts, bi.GoVersion), " ")
}
