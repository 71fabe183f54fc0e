package view

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether f, a reader or a writer, is a terminal: an
// *os.File on a tty.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// TerminalWidth returns the width of the terminal w is, or 0 when w is not
// a terminal.
func TerminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}
