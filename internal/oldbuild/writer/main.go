//go:build ignore

// The writer a version skew test runs as an older engine: package
// oldbuild builds it against the sessiontree module as an older commit
// left it, so it uses only what every engine since 2026-12-03 has. It
// reads one command a line from stdin and answers each with one line,
// "ok" or "error: ...":
//
//	open sqlite PATH | open pg URL   opens the database (migrating it to its schema)
//	create ID                        creates session ID
//	write ID                         appends to session ID, created before, what tells the older rules apart
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/sessiontree/sessiontree"
	"github.com/sessiontree/sessiontree/engine"
	"github.com/sessiontree/sessiontree/pgengine"
)

type database interface {
	CreateSession(ctx context.Context, meta sessiontree.SessionMeta) (sessiontree.Storage, error)
}

type sqliteDB struct{ *engine.DB }

func (d sqliteDB) CreateSession(ctx context.Context, m sessiontree.SessionMeta) (sessiontree.Storage, error) {
	return d.DB.CreateSession(ctx, m)
}

type pgDB struct{ *pgengine.DB }

func (d pgDB) CreateSession(ctx context.Context, m sessiontree.SessionMeta) (sessiontree.Storage, error) {
	return d.DB.CreateSession(ctx, m)
}

func main() {
	ctx := context.Background()
	var db database
	sessions := map[string]sessiontree.Storage{}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		verb, arg, _ := strings.Cut(in.Text(), " ")
		var err error
		switch verb {
		case "open":
			db, err = open(ctx, arg)
		case "create":
			sessions[arg], err = db.CreateSession(ctx, sessiontree.SessionMeta{ID: arg, Cwd: "/skew"})
		case "write":
			err = write(ctx, sessions[arg])
		default:
			err = fmt.Errorf("unknown command %q", verb)
		}
		if err != nil {
			fmt.Println("error:", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Println("ok")
		}
	}
}

func open(ctx context.Context, arg string) (database, error) {
	kind, target, _ := strings.Cut(arg, " ")
	if kind == "pg" {
		db, err := pgengine.Open(ctx, target, pgengine.Options{})
		return pgDB{db}, err
	}
	db, err := engine.Open(ctx, target, engine.Options{})
	return sqliteDB{db}, err
}

// write appends what older engines derived otherwise: a name with U+0085
// (Go's trim drops it, pi's keeps it), usage at a time with a comma
// before its fraction (an older rule kept it on another day), and a
// branch (before migration 19 a trigger counted the tree's tips).
func write(ctx context.Context, st sessiontree.Storage) error {
	if st == nil {
		return fmt.Errorf("no such session created")
	}
	msg := func(m string) sessiontree.Draft {
		return sessiontree.Draft{Type: "message", Fields: json.RawMessage(`{"message":` + m + `}`)}
	}
	first, err := st.Append(ctx, msg(`{"role":"user","content":"hello","timestamp":1}`), sessiontree.AppendOptions{})
	if err != nil {
		return err
	}
	usage := msg(`{"role":"assistant","provider":"p","model":"m","content":[],"usage":{"input":10,"output":20,"cacheRead":3,"cacheWrite":4,"totalTokens":37,"cost":{"total":0.25}},"timestamp":2}`)
	usage.Timestamp = "2026-03-01T10:00:00,123Z"
	drafts := []sessiontree.Draft{usage, {Type: "session_info", Fields: json.RawMessage(`{"name":" skew\u0085 "}`)}}
	for _, d := range drafts {
		if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
			return err
		}
	}
	if _, err := st.SetLeaf(ctx, first.ID, sessiontree.AppendOptions{}); err != nil {
		return err
	}
	_, err = st.Append(ctx, msg(`{"role":"user","content":"another branch","timestamp":3}`), sessiontree.AppendOptions{})
	return err
}
