package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestAppendInterruptedWaitingForInput interrupts append while it waits
// for its next line of input (stdin a pipe nobody writes to): it must
// stop, exit 1 saying it was interrupted, and keep the entry it was given
// before; a read that ignored the cancellation would wait for input
// forever, deaf to Ctrl-C and SIGTERM.
func TestAppendInterruptedWaitingForInput(t *testing.T) {
	db := newDB(t)
	ok(t, "--db", db, "import", "../../view/testdata/demo.jsonl")
	in, feed := io.Pipe()
	defer feed.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"--db", db, "append", "0198f2a4"}, in, &out, &errb) }()
	if _, err := io.WriteString(feed, `{"type":"message","message":{"role":"user","content":"first"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for len(out.lines()) == 0 {
		time.Sleep(5 * time.Millisecond) // the first entry committed
	}
	cancel() // as SIGINT does in runMain
	select {
	case c := <-code:
		if c != 1 || !strings.Contains(strings.Join(errb.lines(), "\n"), "interrupted") {
			t.Errorf("append interrupted: exit %d, stderr %q; want 1, interrupted", c, strings.Join(errb.lines(), "\n"))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("append still waiting for input 20 s after it was interrupted")
	}
	id := out.lines()[0]
	if got := ok(t, "--db", db, "log", "0198f2a4", "--json"); !strings.Contains(got, `"id":"`+id+`"`) || !strings.Contains(got, `"first"`) {
		t.Errorf("log = %q; want entry %s, appended before the interruption", got, id)
	}
}
