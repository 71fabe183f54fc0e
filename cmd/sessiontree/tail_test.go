package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a stdout that a test reads while the command writes.
type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the complete lines written so far.
func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.Split(s[:i], "\n")
	}
	return nil
}

// waitFor waits up to d for the lines of out to satisfy ok.
func (l *lockedBuffer) waitFor(d time.Duration, ok func(lines []string) bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if ok(l.lines()) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// appendStep appends one custom entry with the command and returns its id.
func appendStep(t *testing.T, db string, i int) string {
	t.Helper()
	r := runCmd(t, `{"type":"custom","customType":"step","data":{"i":`+strconv.Itoa(i)+`}}`+"\n", "--db", db, "append", "0198f2a4")
	if r.code != 0 {
		t.Fatalf("append: exit %d, stderr %q", r.code, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

// tailAppends appends entries while a tail writes to out: until it
// prints the first (it prints only what comes after it started), then two
// more. It checks that tail printed the entries in the order appended,
// none missed from the first it printed, and returns the lines.
func tailAppends(t *testing.T, db string, out *lockedBuffer, idOf func(line string) string) []string {
	t.Helper()
	var ids []string
	for !out.waitFor(300*time.Millisecond, func(l []string) bool { return len(l) > 0 }) {
		if len(ids) > 30 {
			t.Fatalf("tail printed nothing after %d appends", len(ids))
		}
		ids = append(ids, appendStep(t, db, len(ids)))
	}
	ids = append(ids, appendStep(t, db, len(ids)), appendStep(t, db, len(ids)+1))
	last := ids[len(ids)-1]
	if !out.waitFor(10*time.Second, func(l []string) bool { return len(l) > 0 && idOf(l[len(l)-1]) == last }) {
		t.Fatalf("tail printed %q; want a last line with %s", out.lines(), last)
	}
	lines := out.lines()
	var got []string
	for _, l := range lines {
		got = append(got, idOf(l))
	}
	if len(got) > len(ids) || !slices.Equal(got, ids[len(ids)-len(got):]) {
		t.Fatalf("tail printed ids %v; want the last of %v in order", got, ids)
	}
	return lines
}

func textID(line string) string {
	if f := strings.Fields(line); len(f) > 2 {
		return f[2]
	}
	return ""
}

func jsonID(line string) string {
	var e struct{ ID string }
	json.Unmarshal([]byte(line), &e)
	return e.ID
}

// TestTail runs tail in this process while entries are appended, in text
// and in JSON, and stops it as Ctrl-C does.
func TestTail(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	for _, tt := range []struct {
		name string
		args []string
		idOf func(string) string
		line string // a regular expression every line matches
	}{
		{"text", nil, textID, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  [0-9a-f]{8} custom step$`},
		{"json", []string{"--json"}, jsonID,
			`^\{"type":"custom","id":"[0-9a-f]{8}","parentId":"[0-9a-f]{8}","timestamp":"[^"]+Z","customType":"step","data":\{"i":\d+\}\}$`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out lockedBuffer
			var errb bytes.Buffer
			code := make(chan int, 1)
			go func() {
				code <- run(ctx, append([]string{"--db", db, "tail", "0198f2a4"}, tt.args...), strings.NewReader(""), &out, &errb)
			}()
			lines := tailAppends(t, db, &out, tt.idOf)
			cancel() // as SIGINT does in runMain
			if c := <-code; c != 0 {
				t.Fatalf("tail ended with exit %d, stderr %q; want 0", c, errb.String())
			}
			for i, l := range lines {
				if !regexp.MustCompile(tt.line).MatchString(l) {
					t.Errorf("tail line %d = %q; want %s", i, l, tt.line)
				}
			}
		})
	}
	t.Run("last lines", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out lockedBuffer
		code := make(chan int, 1)
		go func() {
			code <- run(ctx, []string{"--db", db, "tail", "0198f2a4", "-n", "2", "--json"}, strings.NewReader(""), &out, &out)
		}()
		if !out.waitFor(10*time.Second, func(l []string) bool { return len(l) >= 2 }) {
			t.Fatalf("tail -n 2 printed %q; want 2 lines", out.lines())
		}
		cancel()
		<-code
		var all []json.RawMessage
		if err := json.Unmarshal([]byte(ok(t, "--db", db, "log", "0198f2a4", "--json")), &all); err != nil {
			t.Fatal(err)
		}
		lines := out.lines()
		for i, raw := range all[len(all)-2:] {
			var want bytes.Buffer
			if err := json.Compact(&want, raw); err != nil {
				t.Fatal(err)
			}
			if lines[i] != want.String() {
				t.Errorf("tail -n 2 line %d = %q; want %q", i, lines[i], want.String())
			}
		}
	})
	if r := runCmd(t, "", "--db", db, "tail", "0198f2a4", "-n", "-1"); r.code != 2 {
		t.Errorf("tail -n -1: exit %d, stderr %q; want 2", r.code, r.stderr)
	}
}

// TestTailProcess runs tail as its own process: it sees the entries this
// process appends, and exits 0 on SIGINT.
func TestTailProcess(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	cmd := command(t, "--db", db, "tail", "0198f2a4", "--json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.Write(append(sc.Bytes(), '\n'))
		}
	}()
	tailAppends(t, db, &out, jsonID)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-copied
	if err := cmd.Wait(); err != nil {
		t.Errorf("tail after SIGINT: %v (stderr %q); want exit 0", err, stderr.String())
	}
}
