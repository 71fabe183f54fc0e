package pgengine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/internal/pgtest"
)

// TestClaimLeaseExpiresWhileHolderStalled: a claim's holder writes, and
// the network stops delivering its write without a word (pgtest's
// Stall) at each point of the write: before its row lock reaches the
// server, while it holds the lock (its lease's renewal or its insert on
// the way), its COMMIT on the way, the COMMIT's reply on the way. Its
// lease runs out meanwhile; another process then takes the session and
// writes, waiting for the row lock where the stalled write holds it,
// until the connection is cut (what the stalled client's TCP timeout
// does, 30 s later in life). The two writers never interleave: the
// stalled write fails (its claim stale when tried again, or its outcome
// unknown at the COMMIT; or, tried again once cut, locks the session
// before the taker and, its claim still the current one, writes and
// renews it), is stored at most once and only before the taker's entry,
// and the holder's next write is refused as stale.
func TestClaimLeaseExpiresWhileHolderStalled(t *testing.T) {
	t.Parallel()
	for _, point := range []struct {
		name  string
		match func(pgtest.Message) bool
	}{
		{"lock", sending("FOR UPDATE OF s")},
		{"renewal", sending("UPDATE claims SET expires_ms")},
		{"insert", sending("INSERT INTO entries")},
		{"commit", func(m pgtest.Message) bool { return m.FromClient && strings.EqualFold(m.SQL, "commit") }},
		{"commit reply", committed},
	} {
		t.Run(point.name, func(t *testing.T) {
			t.Parallel()
			stalledHolder(t, point.match)
		})
	}
}

// stalledHolder runs TestClaimLeaseExpiresWhileHolderStalled's case of
// the stall at the first message match accepts.
func stalledHolder(t *testing.T, match func(pgtest.Message) bool) {
	ctx := context.Background()
	const ttl = 200 * time.Millisecond
	f := faultSession(t)
	held, err := f.st.Claim(ctx, "stalled", ttl)
	if err != nil {
		t.Fatal(err)
	}
	stall, stalled := signalling(pgtest.Stall, match)
	f.p.SetFault(stall)
	holderErr := make(chan error, 1)
	go func() {
		_, err := held.Append(ctx, customDraft(1), sessiontree.AppendOptions{})
		holderErr <- err
	}()
	select {
	case <-stalled:
	case err := <-holderErr:
		t.Fatalf("the holder's append returned %v before the stall", err)
	}
	time.Sleep(ttl + 50*time.Millisecond) // the lease runs out
	taken := make(chan error, 1)
	go func() { taken <- takeAndWrite(ctx, f.direct, f.st.ID()) }()
	time.Sleep(100 * time.Millisecond)
	f.p.CutAll()
	for _, ch := range []chan error{taken, holderErr} {
		select {
		case err := <-ch:
			if ch == taken && err != nil {
				t.Fatalf("taker: %v", err)
			}
			if ch == holderErr {
				t.Logf("stalled holder's append: %v", err)
			}
			if ch == holderErr && err != nil && !errors.Is(err, sessiontree.ErrStaleClaim) && !errors.Is(err, sessiontree.ErrCommitUnknown) {
				t.Errorf("stalled holder's append = %v; want nil, ErrStaleClaim or ErrCommitUnknown", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("still waiting 20 s after the connection was cut")
		}
	}
	wantOrder(t, logOf(t, f.direct, f.st.ID()))
	if _, err := held.Append(ctx, customDraft(3), sessiontree.AppendOptions{}); !errors.Is(err, sessiontree.ErrStaleClaim) {
		t.Errorf("the holder's next append = %v; want ErrStaleClaim", err)
	}
}

// takeAndWrite claims session id on db once the stalled holder's lease
// ran out, and appends through the claim. The holder's append, tried
// again once its connection is cut, may lock the session first, and
// find its claim still the session's (nobody took it yet): it writes
// and renews its lease, and the taker tries again once that ran out.
func takeAndWrite(ctx context.Context, db *DB, id string) error {
	st, err := db.OpenStorage(ctx, id)
	if err != nil {
		return err
	}
	c, err := st.Claim(ctx, "taker", time.Minute)
	for i := 0; errors.Is(err, sessiontree.ErrLocked) && i < 100; i++ {
		time.Sleep(20 * time.Millisecond)
		c, err = st.Claim(ctx, "taker", time.Minute)
	}
	if err != nil {
		return err
	}
	if c.Fence() != 2 {
		return errors.New("the taker's claim is not the second")
	}
	_, err = c.Append(ctx, customDraft(2), sessiontree.AppendOptions{})
	return err
}

// wantOrder wants the log to hold the first entry, the stalled write
// (customDraft(1)) at most once and only before the taker's
// (customDraft(2)), which it holds once.
func wantOrder(t *testing.T, log []sessiontree.Entry) {
	t.Helper()
	got := steps(t, log[1:])
	if len(got) == 1 && got[0] == 2 || len(got) == 2 && got[0] == 1 && got[1] == 2 {
		return
	}
	t.Errorf("the log's writes after the first hold %v; want [2], or [1 2]", got)
}

// TestStalledWriterFreesSession: a writer lost while its transaction
// holds a session's row lock (a machine of the fleet powered off, cut
// off, or frozen mid-append) left the lock held until the server noticed
// the client gone: with the server's defaults, its TCP keepalive gives
// up after more than two hours, and every other writer to the session
// waited that long; a client frozen with its network up, never. Every
// connection the engine opens now asks the server for the client's
// TCP bounds on its side too (keepalives, tcp_user_timeout: read back
// here by SHOW when the connection is TCP; TestDialBoundsSilentConnection
// checks what is asked) and for idle_in_transaction_session_timeout (a
// minute unless the URL says otherwise), which the proxy can show: a
// write stalled between two statements of its transaction (AppendAll's
// way; its backend idle in the transaction) is ended by the server, the
// lock goes, and another writer goes on. The stalled write is stored
// at most once (the proxy passes on the server's end of its connection,
// and the write, not committed, is tried again).
func TestStalledWriterFreesSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Migrated.Database(t)
	wantServerBounds(t, openTestURL(t, url, Options{}))
	p := pgtest.NewProxy(t, url)
	stalledDB := openTestURL(t, p.URL(url)+"&idle_in_transaction_session_timeout=300", Options{})
	st := newStorage(t, stalledDB)
	if _, err := st.Append(ctx, customDraft(0), sessiontree.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	stall, stalled := signalling(pgtest.Stall, sending("INSERT INTO entries"))
	p.SetFault(stall)
	go st.AppendAll(ctx, []sessiontree.Draft{customDraft(1)}, sessiontree.AppendOptions{}) // ends when the proxy does
	<-stalled
	other, err := openTestURL(t, url, Options{}).OpenStorage(ctx, st.ID())
	if err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := other.Append(wait, customDraft(2), sessiontree.AppendOptions{}); err != nil {
		t.Fatalf("append beside a stalled writer holding the session = %v", err)
	}
	stored := map[int]int{}
	for _, d := range steps(t, logOf(t, other.db, st.ID())) {
		stored[d]++
	}
	if stored[0] != 1 || stored[2] != 1 || stored[1] > 1 {
		t.Errorf("the log holds entries %v (data: times); want the first and the other writer's once, the stalled one at most once", stored)
	}
}

// wantServerBounds wants db's connections to hold the bounds
// serverBounds asks for: the TCP ones on a TCP connection (a server
// keeps none on a Unix socket).
func wantServerBounds(t *testing.T, db *DB) {
	t.Helper()
	var got struct {
		TCP      bool   `db:"tcp"`
		Idle     string `db:"idle"`
		KeepIdle string `db:"keep_idle"`
		User     string `db:"user_timeout"`
	}
	err := db.db.GetContext(context.Background(), &got, `SELECT inet_server_addr() IS NOT NULL AS tcp,
		current_setting('idle_in_transaction_session_timeout') AS idle,
		current_setting('tcp_keepalives_idle') AS keep_idle, current_setting('tcp_user_timeout') AS user_timeout`)
	if err != nil {
		t.Fatal(err)
	}
	if got.Idle != "1min" || got.TCP && (got.KeepIdle != "15" || got.User != "30000") {
		t.Errorf("a connection's bounds = %+v; want idle in transaction 1min, and on TCP keepalive idle 15, user timeout 30000 ms", got)
	}
}

// steps are the data of log's entries, customDraft's.
func steps(t *testing.T, log []sessiontree.Entry) []int {
	t.Helper()
	var out []int
	for _, e := range log {
		var step struct{ Data int }
		if err := json.Unmarshal(e.Raw, &step); err != nil {
			t.Fatal(err)
		}
		out = append(out, step.Data)
	}
	return out
}
