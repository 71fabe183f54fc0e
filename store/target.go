package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/sessiontree/sessiontree/pgengine"
)

// Engine names the database engine a [Target] is stored in.
type Engine string

// The engines a target can name.
const (
	// EngineSQLite is a SQLite database file: the embedded default.
	EngineSQLite Engine = "sqlite"
	// EnginePostgres is a PostgreSQL server, named by a postgres:// or
	// postgresql:// URL.
	EnginePostgres Engine = "postgres"
)

// ErrUnknownScheme is matched by an [*UnknownSchemeError]: a database
// target that is a URL of a scheme no engine takes.
var ErrUnknownScheme = errors.New("unknown database URL scheme")

// ErrEngineUnavailable is matched by an [*EngineUnavailableError]: a
// database target names an engine this build cannot open.
var ErrEngineUnavailable = errors.New("database engine not available")

// UnknownSchemeError reports a database target of the form scheme://...
// whose scheme is none of file, postgres and postgresql. It matches
// [ErrUnknownScheme].
type UnknownSchemeError struct {
	// Scheme is the scheme as written, without "://".
	Scheme string
}

func (e *UnknownSchemeError) Error() string {
	return fmt.Sprintf("unknown database URL scheme %q (give a file path, a file:// URL or a postgres:// URL)", e.Scheme)
}

// Is makes errors.Is(err, ErrUnknownScheme) true.
func (e *UnknownSchemeError) Is(target error) bool { return target == ErrUnknownScheme }

// EngineUnavailableError reports a target naming an engine that this
// build cannot open. It matches [ErrEngineUnavailable].
type EngineUnavailableError struct {
	// Engine is the engine the target named.
	Engine Engine
}

func (e *EngineUnavailableError) Error() string {
	return fmt.Sprintf("database engine %s is not available in this build", e.Engine)
}

// Is makes errors.Is(err, ErrEngineUnavailable) true.
func (e *EngineUnavailableError) Is(target error) bool { return target == ErrEngineUnavailable }

// Target is where a store lives: an engine and, for SQLite, a file path,
// for PostgreSQL the connection URL as given, its scheme in lower case.
type Target struct {
	// Engine is the engine that stores it.
	Engine Engine
	// Location is the SQLite file path, or the PostgreSQL URL.
	Location string
}

// ParseTarget tells what a --db value or $SESSIONTREE_DB names. A
// postgres:// or postgresql:// URL, the scheme in any case, names a
// PostgreSQL database (its Location has the scheme in lower case); a
// file:// URL (no host, or localhost) names the SQLite file at its path;
// anything else of the form scheme://... is refused with an
// [*UnknownSchemeError]; a PostgreSQL or file URL that lacks a slash
// (postgres:/host/db, file:/tmp/s.db, SQLite's file:s.db) is refused too
// (matching [ErrBadOptions]); everything else is a SQLite file
// path, relative or absolute. A scheme has two letters or more, so a Windows path such
// as C:\x or C://x is a path. An empty target is refused.
func ParseTarget(target string) (Target, error) {
	if target == "" {
		return Target{}, fmt.Errorf("database: empty path: %w", ErrBadOptions)
	}
	scheme, ok := urlScheme(target)
	if !ok {
		return pathTarget(target)
	}
	switch scheme = strings.ToLower(scheme); scheme {
	case "postgres", "postgresql":
		// pgx reads only a lower-case scheme as a URL: POSTGRES://host/db
		// it took for keywords and values, and connected to the defaults.
		return Target{Engine: EnginePostgres, Location: scheme + target[len(scheme):]}, nil
	case "file":
		return fileTarget(target)
	}
	return Target{}, &UnknownSchemeError{Scheme: scheme}
}

// pathTarget is the SQLite file at path, but for a URL of a scheme this
// package reads that lacks a slash, which is refused, not taken for a file
// in a folder that an import would make: a PostgreSQL URL
// (postgres:/host/db, folder "postgres:"), a file URL (file:/tmp/s.db,
// folders "file:/tmp") or SQLite's URI filename (file:s.db, which SQLite
// reads as s.db, a file "file:s.db" here).
func pathTarget(path string) (Target, error) {
	lower := strings.ToLower(path)
	for _, scheme := range []string{"postgres:", "postgresql:"} {
		if strings.HasPrefix(lower, scheme) {
			return Target{}, fmt.Errorf("database %s: a PostgreSQL URL starts with %s//: %w", path, scheme, ErrBadOptions)
		}
	}
	if strings.HasPrefix(lower, "file:") {
		return Target{}, fmt.Errorf("database %s: a file URL starts with file:// (file:///home/me/sessions.db); or give the path itself: %w", path, ErrBadOptions)
	}
	return Target{Engine: EngineSQLite, Location: path}, nil
}

// urlScheme returns the scheme of a target of the form scheme://...: two
// or more characters, a letter and then letters, digits, '+', '-' or '.'
// (RFC 3986), so that a drive letter is not one.
func urlScheme(target string) (string, bool) {
	i := strings.Index(target, "://")
	if i < 2 {
		return "", false
	}
	for j, c := range target[:i] {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", false
		}
	}
	return target[:i], true
}

// fileTarget reads a file:// URL: its path, unescaped. A host other than
// localhost, or a query, is refused rather than ignored.
func fileTarget(target string) (Target, error) {
	u, err := url.Parse(target)
	if err != nil {
		return Target{}, fmt.Errorf("database %s: %w", target, err)
	}
	switch {
	case u.Host != "" && u.Host != "localhost":
		return Target{}, fmt.Errorf("database %s: a file URL on host %q: %w", target, u.Host, ErrBadOptions)
	case u.RawQuery != "" || u.Fragment != "":
		return Target{}, fmt.Errorf("database %s: a file URL takes no query or fragment: %w", target, ErrBadOptions)
	case u.Path == "":
		return Target{}, fmt.Errorf("database %s: no path: %w", target, ErrBadOptions)
	}
	return Target{Engine: EngineSQLite, Location: u.Path}, nil
}

// OpenURL opens the store that target names (see [ParseTarget]): a
// SQLite file with [Open], a PostgreSQL database with [OpenPostgres]. It
// is the one place that picks the engine.
func OpenURL(ctx context.Context, target string, opts Options) (*Store, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	switch t.Engine {
	case EngineSQLite:
		return Open(ctx, t.Location, opts)
	case EnginePostgres:
		return OpenPostgres(ctx, t.Location, opts)
	}
	return nil, fmt.Errorf("open store: %w", &EngineUnavailableError{Engine: t.Engine})
}

// OpenPostgres opens the store in the PostgreSQL database at url (a
// postgres:// or postgresql:// URL), bringing its schema up to date; the
// server must already hold the database (see the README). The errors of
// pgengine.Open apply: a schema newer than this code is refused.
func OpenPostgres(ctx context.Context, url string, opts Options) (*Store, error) {
	db, err := pgengine.Open(ctx, url, opts.Postgres)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return New(db), nil
}
