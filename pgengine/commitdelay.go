package pgengine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiontree/sessiontree"
)

// The server's commit_delay makes the commits of writers in different
// processes share WAL flushes: a backend about to flush the log waits
// that many microseconds first when at least commit_siblings other
// backends have a transaction open, and the commits that arrive
// meanwhile go out with its flush. The engine's own groups (group.go)
// share a flush within one DB; across processes only the server can
// group. On a durable 2-core server, 16 writers in 4 processes appended
// 11–18% faster with 100 µs and commit_siblings = 1 (+14% over 40
// interleaved pairs; 6% less server CPU per append; 50 or 200 µs, or
// siblings 4, were no better: bench/README.md, PostgreSQL writers, sixth
// and seventh passes); a lone writer has no sibling with a transaction
// open and is never delayed (unchanged in those pairs).
//
// commit_delay is a superuser's setting (PGC_SUSET): a role may set it
// only when a superuser granted it (GRANT SET ON PARAMETER commit_delay
// TO role, PostgreSQL 15) or is one. So the engine asks for it on its
// connections when the role may and nobody chose a delay already (the
// server's, the database's or the role's commit_delay is 0), and
// otherwise leaves the server as it is, never failing Open. A URL's own
// commit_delay is the caller's choice, applied as given (0 turns the
// engine's off); a server that refuses it fails Open with a
// [*SettingError] naming the GRANT that allows it. With a delay the
// engine asks for commit_siblings = 1 unless the URL gives it: the
// server's 5 would keep it from applying to a few processes' writers,
// whose appends commit in a group's transaction per process.
const (
	defaultCommitDelay    = "100" // µs
	defaultCommitSiblings = "1"
)

// commitDelay decides the commit_delay of a DB's pooled connections:
// the first connection finds out whether the role may set it (probe),
// the later ones start with it (the settings of their startup message,
// no round trip). It is safe for concurrent use; mu guards known and
// params.
type commitDelay struct {
	asked    string // the URL's commit_delay, "" when it has none
	siblings string // the URL's commit_siblings, "" when it has none

	mu     sync.Mutex
	known  bool              // a connection probed
	params map[string]string // what later connections start with; nil for nothing
}

// newCommitDelay takes the URL's commit_delay out of cfg's settings: a
// server that refuses it would fail the connection with a FATAL that
// does not say which of the URL's settings it was, so the first
// connection sets it by a statement (probe) and later ones start with
// it once it is known to be accepted.
func newCommitDelay(cfg *pgx.ConnConfig) *commitDelay {
	cd := &commitDelay{asked: cfg.RuntimeParams["commit_delay"], siblings: cfg.RuntimeParams["commit_siblings"]}
	delete(cfg.RuntimeParams, "commit_delay")
	return cd
}

// beforeConnect gives a connection about to be made the settings the
// probe found (stdlib.OptionBeforeConnect: cfg is a shallow copy, so its
// map is replaced, not changed).
func (cd *commitDelay) beforeConnect(_ context.Context, cfg *pgx.ConnConfig) error {
	cd.mu.Lock()
	params := cd.params
	cd.mu.Unlock()
	if len(params) == 0 {
		return nil
	}
	rp := maps.Clone(cfg.RuntimeParams)
	maps.Copy(rp, params)
	cfg.RuntimeParams = rp
	return nil
}

// afterConnect probes on a new connection until one has: the URL's
// commit_delay is set (a refusal is a *SettingError), else the engine's
// delay when the role may set it and the server's is 0. Connections made
// at once before the first probe ends each probe, and agree.
func (cd *commitDelay) afterConnect(ctx context.Context, conn *pgx.Conn) error {
	cd.mu.Lock()
	known := cd.known
	cd.mu.Unlock()
	if known {
		return nil
	}
	params, err := cd.probe(ctx, conn)
	if err != nil {
		return err
	}
	cd.mu.Lock()
	cd.known, cd.params = true, params
	cd.mu.Unlock()
	return nil
}

// probe sets commit_delay on conn and returns the settings later
// connections start with.
func (cd *commitDelay) probe(ctx context.Context, conn *pgx.Conn) (map[string]string, error) {
	siblings := cd.siblings
	if siblings == "" {
		siblings = defaultCommitSiblings
	}
	if cd.asked != "" {
		if _, err := conn.Exec(ctx, `SELECT set_config('commit_delay', $1, false)`, cd.asked); err != nil {
			var pg *pgconn.PgError
			if errors.As(err, &pg) {
				return nil, &SettingError{Name: "commit_delay", Value: cd.asked, Role: conn.Config().User, Err: err}
			}
			return nil, err
		}
		if n, _ := strconv.Atoi(cd.asked); n == 0 {
			return map[string]string{"commit_delay": cd.asked}, nil
		}
		// The server's commit_siblings (5) would keep the delay from
		// ever applying to 4 processes' groups.
		if _, err := conn.Exec(ctx, `SELECT set_config('commit_siblings', $1, false)`, siblings); err != nil {
			return nil, err
		}
		return map[string]string{"commit_delay": cd.asked, "commit_siblings": siblings}, nil
	}
	// The WHERE is a one-time filter, evaluated before the set_config
	// calls: on a role that may not set the delay, or a server whose
	// delay someone chose, nothing is set.
	rows, err := conn.Query(ctx, `SELECT set_config('commit_delay', $1, false), set_config('commit_siblings', $2, false)
		WHERE current_setting('commit_delay') = '0' AND has_parameter_privilege('commit_delay', 'SET')`,
		defaultCommitDelay, siblings)
	if err != nil {
		return nil, err
	}
	set := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !set {
		return nil, nil
	}
	return map[string]string{"commit_delay": defaultCommitDelay, "commit_siblings": siblings}, nil
}

// plainName is a role name SQL takes without quotes.
var plainName = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)

// SettingError is a server setting the connection string asks for that
// the server refused (a role's permission, an invalid value); Open
// fails with it. It matches [sessiontree.ErrStorage], and errors.As
// finds the server's *pgconn.PgError in it.
type SettingError struct {
	Name  string // the setting, such as "commit_delay"
	Value string // the value the URL gave it
	Role  string // the role the connection logged in as
	Err   error  // the server's error
}

func (e *SettingError) Error() string {
	msg := fmt.Sprintf("the URL's %s=%s: %v", e.Name, e.Value, e.Err)
	var pg *pgconn.PgError
	if errors.As(e.Err, &pg) && pg.Code == codeNoPrivilege {
		role := e.Role
		if !plainName.MatchString(role) {
			role = pgx.Identifier{role}.Sanitize()
		}
		msg += fmt.Sprintf(" (a superuser can allow it: GRANT SET ON PARAMETER %s TO %s; or set it for the role: ALTER ROLE %s SET %s = %s; or leave it out of the URL)",
			e.Name, role, role, e.Name, e.Value)
	}
	return msg
}

// Unwrap returns sessiontree.ErrStorage and the server's error.
func (e *SettingError) Unwrap() []error { return []error{sessiontree.ErrStorage, e.Err} }
