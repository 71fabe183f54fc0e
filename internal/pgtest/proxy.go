package pgtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Proxy is a TCP proxy between a client and the test server that reads
// the PostgreSQL protocol's messages going each way and cuts a
// connection where a test's [Fault] says: before a statement reaches the
// server, after the server committed but before its reply reaches the
// client, or with the error a server sends as it terminates a backend.
// It lets a test drive the faults a network or a server restart causes
// at chosen points of the protocol, which killing the server cannot aim.
//
// A Proxy is safe for concurrent use.
type Proxy struct {
	ln              net.Listener
	network, target string // how to reach the server: "tcp" and host:port, or "unix" and its socket

	mu    sync.Mutex // guards fault and conns
	fault Fault
	conns map[*proxyConn]bool

	wg sync.WaitGroup // the proxy's goroutines
}

// Message is one protocol message the proxy passes on, shown to a
// [Fault].
type Message struct {
	// FromClient is true for a message to the server, false for one to
	// the client.
	FromClient bool
	// Type is the message's type byte ('P' a Parse, 'B' a Bind, 'Q' a
	// simple query, 'C' a CommandComplete, ...); 0 for the untyped
	// startup messages.
	Type byte
	// SQL is the statement a Parse or a simple query carries, or the one
	// a Bind binds (the proxy remembers each connection's Parse).
	SQL string
	// Tag is a CommandComplete's command tag ("COMMIT", "INSERT 0 1").
	Tag string
}

// Action is what a [Fault] has the proxy do with a message.
type Action int

const (
	// Pass forwards the message.
	Pass Action = iota
	// Cut drops the message and closes the connection both ways: the
	// server sees its client gone (it rolls back a transaction not yet
	// committed), the client sees the connection end.
	Cut
	// Terminate forwards a message to the client, then sends the error
	// a backend ended by pg_terminate_backend or a fast shutdown sends
	// (FATAL, 57P01) and closes the connection: what a client reads when
	// the server is told to stop right after it did what the message
	// reports. On a message from the client it is Cut.
	Terminate
	// PoolerLost drops a message to the client and everything after it,
	// sends the error a connection pooler (PgBouncer) sends when it
	// loses its connection to the server (ERROR, 08P01, "server conn
	// crashed?") and closes the connection: the server may have run
	// every statement the client sent, whatever reply the error takes
	// the place of. On a message from the client it is Cut.
	PoolerLost
	// Stall drops the message and every later one on the connection,
	// both ways, and keeps it open: a network path that stopped
	// delivering without a word (a partition), which the client notices
	// only by its own timeouts.
	Stall
)

// Fault decides what the proxy does with a message; conn numbers the
// proxied connections from 1 in the order they were opened.
type Fault func(conn int, m Message) Action

// NewProxy starts a proxy to the server of the database URL dbURL on a
// free port of 127.0.0.1; it is stopped when tb ends. It passes every
// message until [Proxy.SetFault] says otherwise.
func NewProxy(tb testing.TB, dbURL string) *Proxy {
	tb.Helper()
	cfg, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		tb.Fatalf("proxy: %v", err)
	}
	network, target := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		// A server's Unix socket (host=/folder in the URL), as CI's.
		network, target = "unix", filepath.Join(cfg.Host, fmt.Sprintf(".s.PGSQL.%d", cfg.Port))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("proxy: %v", err)
	}
	p := &Proxy{ln: ln, network: network, target: target, conns: make(map[*proxyConn]bool)}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.stop)
	return p
}

// URL returns dbURL going through the proxy (without TLS: the proxy
// reads the messages).
func (p *Proxy) URL(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return dbURL
	}
	u.Host = p.ln.Addr().String()
	q := u.Query()
	q.Del("host") // a Unix socket's folder: the proxy is on TCP
	q.Del("port")
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return u.String()
}

// SetFault makes f decide on every message from now on; nil passes all.
func (p *Proxy) SetFault(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = f
}

// CutAll closes every connection open through the proxy, as a network
// that drops them does; new ones are accepted.
func (p *Proxy) CutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.close()
	}
}

// stop closes the listener and every connection and waits for the
// proxy's goroutines.
func (p *Proxy) stop() {
	_ = p.ln.Close()
	p.CutAll()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for n := 1; ; n++ {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial(p.network, p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		c := &proxyConn{p: p, n: n, client: client, server: server, stmts: make(map[string]string)}
		p.mu.Lock()
		p.conns[c] = true
		p.mu.Unlock()
		p.wg.Add(2)
		go c.pipe(client, server, true)
		go c.pipe(server, client, false)
	}
}

// decide asks the fault, if any, about m on connection n.
func (p *Proxy) decide(n int, m Message) Action {
	p.mu.Lock()
	f := p.fault
	p.mu.Unlock()
	if f == nil {
		return Pass
	}
	return f(n, m)
}

// proxyConn is one client's connection and the proxy's to the server.
type proxyConn struct {
	p              *Proxy
	n              int
	client, server net.Conn
	once           sync.Once
	// stmts maps the connection's prepared statements to their SQL;
	// only the client-to-server goroutine uses it.
	stmts map[string]string
	// stalled is set once a fault stalled the connection (Stall).
	stalled atomic.Bool
}

func (c *proxyConn) close() {
	c.once.Do(func() {
		_ = c.client.Close()
		_ = c.server.Close()
	})
}

// pipe copies messages from src to dst until either end closes or a
// fault cuts the connection.
func (c *proxyConn) pipe(src, dst net.Conn, fromClient bool) {
	defer c.p.wg.Done()
	defer func() {
		c.close()
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
	}()
	startup := fromClient // the client's first messages have no type byte
	for {
		raw, m, err := readMessage(src, startup)
		if err != nil {
			return
		}
		m.FromClient = fromClient
		if startup && !isEncryptionRequest(raw) {
			startup = false
		}
		if fromClient {
			c.noteSQL(raw, &m)
		}
		if c.stalled.Load() {
			continue
		}
		switch c.p.decide(c.n, m) {
		case Stall:
			c.stalled.Store(true)
			continue
		case Cut:
			return
		case Terminate:
			if !fromClient {
				_, _ = dst.Write(raw)
				_, _ = dst.Write(errorResponse("FATAL", "57P01", "terminating connection due to administrator command"))
			}
			return
		case PoolerLost:
			if !fromClient {
				_, _ = dst.Write(errorResponse("ERROR", "08P01", "server conn crashed?"))
			}
			return
		}
		if _, err := dst.Write(raw); err != nil {
			return
		}
		if fromClient && isEncryptionRequest(raw) {
			// The server answers one byte, unframed; refuse it (the
			// proxy reads the messages), as a server without TLS does.
			if _, err := src.Write([]byte{'N'}); err != nil {
				return
			}
		}
	}
}

// noteSQL sets m.SQL from a Parse, a Bind or a simple query, and
// remembers a Parse's statement.
func (c *proxyConn) noteSQL(raw []byte, m *Message) {
	if m.Type == 0 {
		return
	}
	fields := bytes.Split(raw[5:], []byte{0})
	switch {
	case m.Type == 'P' && len(fields) >= 2:
		m.SQL = string(fields[1])
		c.stmts[string(fields[0])] = m.SQL
	case m.Type == 'B' && len(fields) >= 2:
		m.SQL = c.stmts[string(fields[1])]
	case m.Type == 'Q' && len(fields) >= 1:
		m.SQL = string(fields[0])
	}
}

// readMessage reads one message: a type byte (none in the startup
// phase), a length counting itself, the body. It returns the message's
// bytes and what a Fault is shown of it.
func readMessage(r io.Reader, startup bool) ([]byte, Message, error) {
	head := 5
	if startup {
		head = 4
	}
	raw := make([]byte, head, 64)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, Message{}, err
	}
	var m Message
	if !startup {
		m.Type = raw[0]
	}
	n := int(binary.BigEndian.Uint32(raw[head-4:]))
	if n < 4 || n > 1<<30 {
		return nil, m, fmt.Errorf("proxy: bad message length %d", n)
	}
	raw = append(raw, make([]byte, n-4)...)
	if _, err := io.ReadFull(r, raw[head:]); err != nil {
		return nil, m, err
	}
	if m.Type == 'C' {
		m.Tag = string(bytes.TrimRight(raw[5:], "\x00"))
	}
	return raw, m, nil
}

// isEncryptionRequest reports whether a startup message asks for TLS
// or GSS encryption.
func isEncryptionRequest(raw []byte) bool {
	if len(raw) != 8 {
		return false
	}
	code := binary.BigEndian.Uint32(raw[4:])
	return code == 80877103 || code == 80877104
}

// errorResponse is an ErrorResponse message of severity, code and
// message.
func errorResponse(severity, code, message string) []byte {
	var body bytes.Buffer
	for _, f := range [][2]string{{"S", severity}, {"V", severity}, {"C", code}, {"M", message}} {
		body.WriteString(f[0])
		body.WriteString(f[1])
		body.WriteByte(0)
	}
	body.WriteByte(0)
	out := binary.BigEndian.AppendUint32([]byte{'E'}, uint32(body.Len()+4))
	return append(out, body.Bytes()...)
}
