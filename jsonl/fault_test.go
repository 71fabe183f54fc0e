package jsonl_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/jsonl"
)

// The tests of this file fail the storage's writes, syncs and cuts part
// way (jsonl.SetFileFaults), as a full disk or a failing one does. They
// are not parallel: the seam is the package's.

// failingWrite returns a write that, at its nth call (1: the first),
// writes keep(len(b)) bytes of b and then fails with err, as a write
// that met a full disk part way does; the other calls write.
func failingWrite(nth int, keep func(n int) int, err error) func(*os.File, []byte) (int, error) {
	calls := 0
	return func(f *os.File, b []byte) (int, error) {
		calls++
		if calls != nth {
			return f.Write(b)
		}
		n, werr := f.Write(b[:keep(len(b))])
		if werr != nil {
			return n, werr
		}
		return n, err
	}
}

// faultFile writes a session file of a header and two messages.
func faultFile(t *testing.T) string {
	t.Helper()
	return writeFile(t, lines(testHeader, msg("a1", ""), msg("a2", "a1")))
}

// userDraft is a user message to append.
func userDraft(text string) sessiontree.Draft {
	return sessiontree.Draft{Type: sessiontree.TypeMessage, Fields: json.RawMessage(`{"message":{"role":"user","content":"` + text + `","timestamp":1}}`)}
}

// reopenStrict closes st and reads its file again in Strict mode: it must
// end cleanly and hold the entries ids, in order.
func reopenStrict(t *testing.T, st *jsonl.Storage, ids ...string) {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again := open(t, st.File(), jsonl.Options{Mode: jsonl.Strict})
	if r := again.Report(); r.Torn != nil || len(r.Warnings) > 0 {
		t.Errorf("reopened: torn %+v, warnings %v; want a clean file", r.Torn, r.Warnings)
	}
	if got := strings.Join(logIDs(t, again), " "); got != strings.Join(ids, " ") {
		t.Errorf("reopened, the file holds %s; want %s", got, strings.Join(ids, " "))
	}
}

// appendAndReopen appends a message to st, which must go through, then
// reopens its file (reopenStrict), which must hold ids and that message.
func appendAndReopen(t *testing.T, st *jsonl.Storage, ids ...string) sessiontree.Entry {
	t.Helper()
	e, err := st.Append(context.Background(), userDraft("kept"), sessiontree.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reopenStrict(t, st, append(ids, e.ID)...)
	return e
}

// TestAppendShortWrite: an append whose write fails after any number of
// its bytes (none, one, half, all but the newline) returns the error,
// matching ErrStorage and the system's ENOSPC, leaves the file as it was
// and the session without the entry, and the next append lands on a
// clean line: no half line for it to run into.
func TestAppendShortWrite(t *testing.T) {
	ctx := context.Background()
	for name, keep := range map[string]func(int) int{
		"none":                func(int) int { return 0 },
		"one":                 func(int) int { return 1 },
		"half":                func(n int) int { return n / 2 },
		"all but the newline": func(n int) int { return n - 1 },
	} {
		t.Run(name, func(t *testing.T) {
			path := faultFile(t)
			before := readFile(t, path)
			st := open(t, path, jsonl.Options{})
			restore := jsonl.SetFileFaults(jsonl.FileFaults{Write: failingWrite(1, keep, syscall.ENOSPC)})
			_, err := st.Append(ctx, userDraft("lost"), sessiontree.AppendOptions{})
			restore()
			if !errors.Is(err, sessiontree.ErrStorage) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append with the write failing = %v; want ErrStorage and ENOSPC", err)
			}
			if got := readFile(t, path); got != before {
				t.Fatalf("after the failed append the file is %q; want it as it was", got)
			}
			if got := strings.Join(logIDs(t, st), " "); got != "a1 a2" {
				t.Fatalf("after the failed append the session holds %s; want a1 a2", got)
			}
			if e := appendAndReopen(t, st, "a1", "a2"); e.ParentID != "a2" {
				t.Errorf("the append after the failed one has parent %q; want a2", e.ParentID)
			}
		})
	}
}

// TestAppendSyncFails: with Options.Sync, an append whose fsync fails
// returns the error and takes its line back out of the file: it was not
// made durable, and the session does not hold it.
func TestAppendSyncFails(t *testing.T) {
	ctx := context.Background()
	path := faultFile(t)
	before := readFile(t, path)
	st := open(t, path, jsonl.Options{Sync: true})
	restore := jsonl.SetFileFaults(jsonl.FileFaults{Sync: func(*os.File) error { return syscall.EIO }})
	_, err := st.Append(ctx, userDraft("unsynced"), sessiontree.AppendOptions{})
	restore()
	if !errors.Is(err, sessiontree.ErrStorage) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("append with the sync failing = %v; want ErrStorage and EIO", err)
	}
	if got := readFile(t, path); got != before {
		t.Fatalf("after the failed sync the file is %q; want it as it was", got)
	}
	appendAndReopen(t, st, "a1", "a2")
}

// TestAppendUndoFails: when the cut that takes a half-written line back
// out fails too, the storage refuses every later write, so that none
// runs into that half line; the next open finds it as a torn last line,
// keeps its bytes aside and cuts it, and appends go on from a clean line.
func TestAppendUndoFails(t *testing.T) {
	ctx := context.Background()
	path := faultFile(t)
	before := readFile(t, path)
	st := open(t, path, jsonl.Options{})
	restore := jsonl.SetFileFaults(jsonl.FileFaults{
		Write:    failingWrite(1, func(n int) int { return n / 2 }, syscall.ENOSPC),
		Truncate: func(*os.File, int64) error { return syscall.EIO },
	})
	_, err := st.Append(ctx, userDraft("torn"), sessiontree.AppendOptions{})
	restore()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append with the write and the cut failing = %v; want ENOSPC", err)
	}
	torn := strings.TrimPrefix(readFile(t, path), before)
	if torn == "" || strings.Contains(torn, "\n") {
		t.Fatalf("the file after the failed write and cut ends in %q; want the half line", torn)
	}
	if _, err := st.Append(ctx, userDraft("refused"), sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrStorage) {
		t.Fatalf("append after a failed cut = %v; want the storage failure", err)
	}
	if got := readFile(t, path); got != before+torn {
		t.Fatalf("a refused append changed the file to %q", got)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again := open(t, path, jsonl.Options{})
	tt := again.Report().Torn
	if tt == nil || tt.Line != 4 || tt.Offset != int64(len(before)) || tt.Sidecar == "" {
		t.Fatalf("reopened: torn tail %+v; want line 4 at offset %d, kept aside", tt, len(before))
	}
	if kept := readFile(t, tt.Sidecar); kept != torn {
		t.Errorf("the sidecar holds %q; want %q", kept, torn)
	}
	appendAndReopen(t, again, "a1", "a2")
}

// TestAppendBatchShortWrite: a batch whose third entry's write fails part
// way leaves neither the file nor the session holding any of it, and the
// same batch then goes through whole.
func TestAppendBatchShortWrite(t *testing.T) {
	ctx := context.Background()
	path := faultFile(t)
	before := readFile(t, path)
	st := open(t, path, jsonl.Options{Sync: true})
	var batch []sessiontree.Entry
	for i, id := range []string{"b1", "b2", "b3", "b4"} {
		parent := "a2"
		if i > 0 {
			parent = batch[i-1].ID
		}
		e, err := sessiontree.DecodeEntry([]byte(msg(id, parent)))
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, e)
	}
	restore := jsonl.SetFileFaults(jsonl.FileFaults{Write: failingWrite(3, func(n int) int { return n / 3 }, syscall.ENOSPC)})
	err := st.AppendBatch(ctx, batch)
	restore()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("batch with its third write failing = %v; want ENOSPC", err)
	}
	if got := readFile(t, path); got != before {
		t.Fatalf("after the failed batch the file is %q; want it as it was", got)
	}
	if got := strings.Join(logIDs(t, st), " "); got != "a1 a2" {
		t.Fatalf("after the failed batch the session holds %s; want a1 a2", got)
	}
	if err := st.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	reopenStrict(t, st, "a1", "a2", "b1", "b2", "b3", "b4")
}

// TestAppendBatchSyncFails: a batch whose sync fails is in the file and
// the session, not known to be durable: the storage refuses to write on
// (reopen to see what the file holds), and the file reads whole.
func TestAppendBatchSyncFails(t *testing.T) {
	ctx := context.Background()
	path := faultFile(t)
	st := open(t, path, jsonl.Options{Sync: true})
	e, err := sessiontree.DecodeEntry([]byte(msg("b1", "a2")))
	if err != nil {
		t.Fatal(err)
	}
	restore := jsonl.SetFileFaults(jsonl.FileFaults{Sync: func(*os.File) error { return syscall.EIO }})
	err = st.AppendBatch(ctx, []sessiontree.Entry{e})
	restore()
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("batch with its sync failing = %v; want EIO", err)
	}
	if _, err := st.Append(ctx, userDraft("refused"), sessiontree.AppendOptions{}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("append after a failed sync = %v; want the sync's failure again", err)
	}
	reopenStrict(t, st, "a1", "a2", "b1")
}

// TestNewlineWriteFails: a file whose last line lacks its newline gets
// one before the next entry; when that write fails, the append fails and
// the next one still writes the newline, once.
func TestNewlineWriteFails(t *testing.T) {
	ctx := context.Background()
	content := strings.TrimSuffix(lines(testHeader, msg("a1", "")), "\n")
	path := writeFile(t, content)
	st := open(t, path, jsonl.Options{})
	restore := jsonl.SetFileFaults(jsonl.FileFaults{Write: failingWrite(1, func(int) int { return 0 }, syscall.ENOSPC)})
	_, err := st.Append(ctx, userDraft("lost"), sessiontree.AppendOptions{})
	restore()
	if !errors.Is(err, syscall.ENOSPC) || readFile(t, path) != content {
		t.Fatalf("append with the newline's write failing = %v, file %q; want ENOSPC, the file as it was", err, readFile(t, path))
	}
	appendAndReopen(t, st, "a1")
	if got := readFile(t, path); !strings.HasPrefix(got, content+"\n{") {
		t.Errorf("the file after the append is %q; want the old line, one newline, the entry", got)
	}
}

// TestCreateHeaderWriteFails: a new file whose header's write fails part
// way is removed, so that the same path can be created again.
func TestCreateHeaderWriteFails(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.jsonl")
	meta := sessiontree.SessionMeta{Cwd: "/p"}
	restore := jsonl.SetFileFaults(jsonl.FileFaults{Write: failingWrite(1, func(n int) int { return n / 2 }, syscall.ENOSPC)})
	_, err := jsonl.Create(ctx, path, meta, jsonl.Options{})
	restore()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Create with the header's write failing = %v; want ENOSPC", err)
	}
	if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("after the failed Create the path holds a file (%v); want none", serr)
	}
	st, err := jsonl.Create(ctx, path, meta, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reopenStrict(t, st)
}

// TestUpgradeWriteFails: an upgrade whose new file's write or sync fails
// leaves the old file as it was and no temporary file, and the next
// upgrade goes through.
func TestUpgradeWriteFails(t *testing.T) {
	ctx := context.Background()
	for name, ff := range map[string]jsonl.FileFaults{
		"write": {Write: failingWrite(1, func(n int) int { return n / 2 }, syscall.ENOSPC)},
		"sync":  {Sync: func(*os.File) error { return syscall.EIO }},
	} {
		t.Run(name, func(t *testing.T) {
			path := copyFixture(t, "legacy-v2-hookmessage.jsonl")
			original := readFile(t, path)
			st := open(t, path, jsonl.Options{})
			restore := jsonl.SetFileFaults(ff)
			err := st.Upgrade(ctx)
			restore()
			if !errors.Is(err, sessiontree.ErrStorage) {
				t.Fatalf("Upgrade with the %s failing = %v; want ErrStorage", name, err)
			}
			if readFile(t, path) != original {
				t.Fatal("a failed upgrade changed the file")
			}
			if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp")); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
			ids := logIDs(t, st)
			if err := st.Upgrade(ctx); err != nil {
				t.Fatal(err)
			}
			reopenStrict(t, st, ids...)
		})
	}
}

// TestSidecarWriteFails: opening a file with a torn last line for writing
// keeps the torn bytes in a sidecar before anything may cut them; when
// that write fails, the open fails, the file keeps its bytes and no
// sidecar stays.
func TestSidecarWriteFails(t *testing.T) {
	ctx := context.Background()
	content := lines(testHeader, msg("a1", "")) + `{"type":"mess`
	path := writeFile(t, content)
	restore := jsonl.SetFileFaults(jsonl.FileFaults{Write: failingWrite(1, func(n int) int { return n / 2 }, syscall.ENOSPC)})
	_, err := jsonl.Open(ctx, path, jsonl.Options{})
	restore()
	if !errors.Is(err, sessiontree.ErrStorage) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Open with the sidecar's write failing = %v; want ErrStorage and ENOSPC", err)
	}
	if readFile(t, path) != content {
		t.Fatal("a failed open changed the file")
	}
	if side, _ := filepath.Glob(path + ".torn-*"); len(side) != 0 {
		t.Errorf("sidecars left: %v", side)
	}
	st := open(t, path, jsonl.Options{})
	if tt := st.Report().Torn; tt == nil || readFile(t, tt.Sidecar) != `{"type":"mess` {
		t.Fatalf("the next open's torn tail %+v; want it kept aside", tt)
	}
}
