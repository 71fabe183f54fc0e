package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes [ParseSize] knows, each a power of 1024.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{
	{"kib", 10}, {"mib", 20}, {"gib", 30},
	{"k", 10}, {"m", 20}, {"g", 30},
	{"b", 0},
}

// ParseSize reads a size in bytes as the command's flags take it: a
// whole number, optionally followed by K or KiB, M or MiB, G or GiB (in
// any case; all powers of 1024) or B: "268435456", "256MiB", "64k". A
// size that is not positive or does not fit an int is refused with
// [ErrBadArgument].
func ParseSize(s string) (int, error) {
	num, shift := strings.TrimSpace(s), uint(0)
	lower := strings.ToLower(num)
	for _, u := range sizeUnits {
		if strings.HasSuffix(lower, u.suffix) {
			num, shift = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt>>shift {
		return 0, fmt.Errorf("size %q is not a positive whole number of bytes, K, M or G: %w", s, ErrBadArgument)
	}
	return int(n << shift), nil
}

// MaxLineEnv is the environment variable that sets the line limit when
// the --max-line flag is not given.
const MaxLineEnv = "SESSIONTREE_MAX_LINE"

// MaxLine returns the longest line, in bytes, that the command reads in
// a session file or in append's input: flag (the --max-line flag) when
// set, else $SESSIONTREE_MAX_LINE as getenv gives it, else 0, which
// means the default, jsonl.DefaultMaxLineBytes (256 MiB). Both are read
// by [ParseSize].
func MaxLine(flag string, getenv func(string) string) (int, error) {
	what, s := "--max-line", flag
	if s == "" {
		what, s = MaxLineEnv, getenv(MaxLineEnv)
	}
	if s == "" {
		return 0, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return n, nil
}
