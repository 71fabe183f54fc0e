package view

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// ImportSummary is what an import did, as `sessiontree import` reports it.
type ImportSummary struct {
	// Files counts the files looked at.
	Files int `json:"files"`
	// New counts files whose session was created.
	New int `json:"new"`
	// Grown counts files that had grown and added their new lines.
	Grown int `json:"grown"`
	// Unchanged counts files with nothing new.
	Unchanged int `json:"unchanged"`
	// Failed counts files not imported, Conflicts included.
	Failed int `json:"failed"`
	// Conflicts counts files that disagree with what is stored.
	Conflicts int `json:"conflicts"`
	// Entries is the number of entries added.
	Entries int `json:"entries"`
	// Bytes is the number of bytes imported.
	Bytes int64 `json:"bytes"`
	// Seconds is how long the import took.
	Seconds float64 `json:"seconds"`
	// Indexed is the number of entries the search index took in after the
	// import, and IndexSeconds how long that took.
	Indexed      int64   `json:"indexed"`
	IndexSeconds float64 `json:"indexSeconds"`
	// Warnings are files that hold entries of types this version does
	// not know, one per file: imported as they are, not problems.
	Warnings []ImportWarning `json:"warnings"`
	// Problems are damaged lines that were tolerated (skipped, or a torn
	// last line left for later).
	Problems []ImportProblem `json:"problems"`
	// Failures are the files not imported, with why.
	Failures []ImportFailure `json:"failures"`
}

// ImportWarning is a file holding entries of types this version does
// not know.
type ImportWarning struct {
	// File is the file's path.
	File string `json:"file"`
	// Entries counts those entries, of every such type.
	Entries int `json:"entries"`
	// Types are their types, in the order first met.
	Types []string `json:"types"`
	// Message says it in a sentence, e.g. `3 entries of types this
	// version does not know ("future_thing"), kept as they are`.
	Message string `json:"message"`
}

// Warning is something a command tells that is not a problem: it does
// not change the exit status.
type Warning struct {
	// Where names the file or the session.
	Where string
	// Message says what.
	Message string
}

// WriteWarnings writes each warning on its own line, "warning: <where>:
// <message>", as text only, whatever the writer.
func WriteWarnings(w io.Writer, ws []Warning) error {
	bw := bufio.NewWriter(w)
	for _, x := range ws {
		writeWarning(bw, x)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write warnings: %w", err)
	}
	return nil
}

func writeWarning(bw *bufio.Writer, x Warning) {
	fmt.Fprintf(bw, "warning: %s: %s\n", OneLine(x.Where), OneLine(x.Message))
}

// ImportProblem is a damaged line of a file.
type ImportProblem struct {
	// File is the file's path.
	File string `json:"file"`
	// Line is the 1-based line number; the header is line 1.
	Line int `json:"line"`
	// Message says what is wrong with the line.
	Message string `json:"message"`
}

// ImportFailure is a file that was not imported.
type ImportFailure struct {
	// File is the file's path.
	File string `json:"file"`
	// Outcome is "failed" or "conflict".
	Outcome string `json:"outcome"`
	// Error says why the file was not imported.
	Error string `json:"error"`
}

// WriteImportSummary writes the summary: one line of counts, then the
// warnings (one line per file, as [WriteWarnings] writes them), the
// problems and the failures, each on its own line with its file (and
// line). It writes only text, never escape codes, whatever the writer:
// a file's name too is folded by [OneLine].
func WriteImportSummary(w io.Writer, s ImportSummary) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s: %d new, %d grown, %d unchanged, %d failed; %s added",
		plural(s.Files, "file"), s.New, s.Grown, s.Unchanged, s.Failed, entries(s.Entries))
	if s.Seconds > 0 {
		fmt.Fprintf(bw, " in %.1fs (%.1f MB/s, %s entries/s)", s.Seconds, mb(s.Bytes)/s.Seconds, Count(int64(float64(s.Entries)/s.Seconds)))
	}
	bw.WriteByte('\n')
	if s.Indexed > 0 {
		fmt.Fprintf(bw, "indexed %s for search", entries(int(s.Indexed)))
		if s.IndexSeconds > 0 {
			fmt.Fprintf(bw, " in %.1fs (%s entries/s)", s.IndexSeconds, Count(int64(float64(s.Indexed)/s.IndexSeconds)))
		}
		bw.WriteByte('\n')
	}
	for _, x := range s.Warnings {
		writeWarning(bw, Warning{Where: x.File, Message: x.Message})
	}
	if len(s.Problems) > 0 {
		fmt.Fprintf(bw, "%s:\n", plural(len(s.Problems), "problem"))
		for _, p := range s.Problems {
			fmt.Fprintf(bw, "  %s:%d: %s\n", OneLine(p.File), p.Line, OneLine(p.Message))
		}
	}
	if len(s.Failures) > 0 {
		fmt.Fprintf(bw, "%s not imported:\n", plural(len(s.Failures), "file"))
		for _, f := range s.Failures {
			msg, file := ErrorLine(f.Error), OneLine(f.File)
			// The store's errors often start with the file again.
			msg = strings.TrimPrefix(strings.TrimPrefix(msg, "import "+file+": "), file+": ")
			fmt.Fprintf(bw, "  %s: %s: %s\n", file, OneLine(f.Outcome), msg)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write import summary: %w", err)
	}
	return nil
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return Count(int64(n)) + " entries"
}

// mb is n bytes in megabytes.
func mb(n int64) float64 { return float64(n) / 1e6 }
