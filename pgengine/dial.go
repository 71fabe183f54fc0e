package pgengine

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// The bound on a connection the network stopped answering without a word
// (a partition, a server's host gone): without one, a statement sent on
// it waits until the operating system gives up on the connection, about
// 15 minutes of retransmissions on Linux, and so does every append
// queued behind it without a deadline. A batch's bytes left
// unacknowledged for tcpUserTimeout end the connection (TCP_USER_TIMEOUT,
// Linux), and keepalive probes, unanswered for about the same time, end
// one that waits for a reply whose request the server's host did take (a
// row lock waited for is answered by probes: a live server is never cut
// however long it takes). The connection's statement then fails as a lost
// connection (ErrCommitUnknown when it was a COMMIT). libpq's parameters
// tcp_user_timeout (ms, 0 the system's), keepalives (0 off),
// keepalives_idle, keepalives_interval (s) and keepalives_count override
// them; pgx would send them to the server as settings of the session,
// which it refuses, so they are read here (dialConfig).
//
// The server is asked for the same bounds on its side of the connection
// (its settings tcp_keepalives_idle, _interval, _count and
// tcp_user_timeout, whatever libpq's parameters made them here): a
// client lost while its transaction holds a session's row lock (a
// machine of the fleet powered off or cut off mid-append) otherwise
// keeps the lock, and every other writer to the session waiting, until
// the server's operating system gives up on the connection, after more
// than two hours of keepalive by default. A client that is there but
// stopped (frozen, or its network path still taking what it is sent)
// with a transaction open is bounded by idleInTransaction
// (idle_in_transaction_session_timeout, unless the URL sets it): the
// server ends that session and its locks go.
const (
	tcpUserTimeout    = 30 * time.Second
	keepaliveIdle     = 15 * time.Second
	keepaliveInterval = 5 * time.Second
	keepaliveCount    = 3
	// idleInTransaction is twice the TCP bound: no transaction of the
	// engine waits that long for its client between statements.
	idleInTransaction = time.Minute
)

// connConfig parses url as pgx does, then sets its dialer (dialConfig),
// the session's isolation and the schema it knows (sayKnownSchema): the config of every connection a DB
// opens, its pool's and its watches'.
func connConfig(url string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message shows the URL with its password masked.
		return nil, err
	}
	if err := dialConfig(cfg); err != nil {
		return nil, err
	}
	// The writes lock the rows they change and wait for them (update,
	// the pipelined appends' BEGIN), which is READ COMMITTED's way:
	// under a transaction snapshot, a server's or database's
	// default_transaction_isolation, every wait for another writer
	// would end in a serialization failure. The reads ask for their
	// REPEATABLE READ snapshot themselves (view).
	cfg.RuntimeParams["default_transaction_isolation"] = "read committed"
	sayKnownSchema(cfg)
	return cfg, nil
}

// dialConfig sets cfg's dialer: pgx's connect timeout, TCP keepalives
// and TCP_USER_TIMEOUT, each the default above unless the connection
// string's libpq parameter says otherwise (taken out of the settings
// pgx would send the server).
func dialConfig(cfg *pgx.ConnConfig) error {
	ka := net.KeepAliveConfig{Enable: true, Idle: keepaliveIdle, Interval: keepaliveInterval, Count: keepaliveCount}
	user := tcpUserTimeout
	params := []struct {
		name string
		unit time.Duration // 0: a count
		set  func(n int64, d time.Duration)
	}{
		{"keepalives", 0, func(n int64, _ time.Duration) { ka.Enable = n != 0 }},
		{"keepalives_idle", time.Second, func(_ int64, d time.Duration) { ka.Idle = d }},
		{"keepalives_interval", time.Second, func(_ int64, d time.Duration) { ka.Interval = d }},
		{"keepalives_count", 0, func(n int64, _ time.Duration) { ka.Count = int(n) }},
		{"tcp_user_timeout", time.Millisecond, func(_ int64, d time.Duration) { user = d }},
	}
	for _, p := range params {
		v, ok := cfg.RuntimeParams[p.name]
		if !ok {
			continue
		}
		delete(cfg.RuntimeParams, p.name)
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("invalid %s %q: want a whole number, 0 or more", p.name, v)
		}
		p.set(n, time.Duration(n)*p.unit)
	}
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: -1, KeepAliveConfig: ka, Control: userTimeoutControl(user)}
	cfg.DialFunc = d.DialContext
	serverBounds(cfg, ka, user)
	return nil
}

// serverBounds asks the server for the bounds of the connection's other
// side: the keepalives ka and user timeout user the client's side has
// (a server ignores them on a Unix socket), and idleInTransaction unless
// cfg (the URL) sets it.
func serverBounds(cfg *pgx.ConnConfig, ka net.KeepAliveConfig, user time.Duration) {
	p := cfg.RuntimeParams
	if ka.Enable {
		p["tcp_keepalives_idle"] = strconv.Itoa(int(ka.Idle / time.Second))
		p["tcp_keepalives_interval"] = strconv.Itoa(int(ka.Interval / time.Second))
		p["tcp_keepalives_count"] = strconv.Itoa(ka.Count)
	}
	p["tcp_user_timeout"] = strconv.FormatInt(user.Milliseconds(), 10)
	if _, ok := p["idle_in_transaction_session_timeout"]; !ok {
		p["idle_in_transaction_session_timeout"] = strconv.FormatInt(idleInTransaction.Milliseconds(), 10)
	}
}
