package pgtest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// shape is what resetting a copy of a template needs to know of the
// template: its fingerprint (schema, and the rows of the tables prepare
// filled), the tables it left empty with the state of each (see
// stateSQL) and the empty tables referring to each, and its sequences'
// positions.
type shape struct {
	print     string
	fingerSQL string // the query that computes a fingerprint
	empty     []string
	state     map[string]string   // table: its state in the template
	referrers map[string][]string // table: the empty tables whose foreign keys refer to it
	sequences string              // setval statements
}

// stateSQL gives, for each table named in $1, what a write leaves changed
// in it: the size of all its files (heap, indexes, TOAST: a row written,
// even deleted since or rolled back, grows one) and the statistics kept of
// it and of its indexes (a vacuum or an analyze sets them). A table whose
// state is still its template's holds nothing to empty.
const stateSQL = `SELECT c.oid::regclass::text, format('%s %s', pg_total_relation_size(c.oid),
	(SELECT string_agg(format('%s/%s/%s', r.reltuples, r.relpages, r.relallvisible), ' ' ORDER BY r.oid) FROM pg_class r
		WHERE r.oid IN (c.oid, c.reltoastrelid)
		OR r.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (c.oid, c.reltoastrelid))))
	FROM pg_class c WHERE c.oid = ANY($1::text[]::regclass[])`

// referrersSQL lists each foreign key's two tables: the one that refers
// and the one it refers to.
const referrersSQL = `SELECT conrelid::regclass::text, confrelid::regclass::text
	FROM pg_constraint WHERE contype = 'f' AND connamespace IN ` + userSchemas

// minResetVersion is the first server version whose copies are reset:
// pg_terminate_backend's wait came with PostgreSQL 14; older servers keep
// making and dropping copies.
const minResetVersion = 140000

// userSchemas restricts a catalog query to what a test may have made: the
// objects outside PostgreSQL's own schemas.
const userSchemas = `(SELECT oid FROM pg_namespace WHERE nspname NOT IN ('pg_catalog', 'information_schema')
	AND nspname NOT LIKE 'pg\_toast%' AND nspname NOT LIKE 'pg\_temp%')`

// schemaPrint lists, one line each, what of a database's schema a test
// may change: a copy whose lines differ from its template's is dropped.
const schemaPrint = `
SELECT 'schema ' || nspname FROM pg_namespace WHERE oid IN ` + userSchemas + `
UNION ALL SELECT format('rel %s %s %s %s', c.oid::regclass, c.relkind, c.relpersistence, c.reloptions)
	FROM pg_class c WHERE c.relnamespace IN ` + userSchemas + `
UNION ALL SELECT format('column %s %s %s %s %s %s', a.attrelid::regclass, a.attnum, a.attname,
		format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attisdropped)
	FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
	WHERE a.attnum > 0 AND c.relnamespace IN ` + userSchemas + `
UNION ALL SELECT format('default %s %s %s', d.adrelid::regclass, d.adnum, pg_get_expr(d.adbin, d.adrelid))
	FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid WHERE c.relnamespace IN ` + userSchemas + `
UNION ALL SELECT 'index ' || pg_get_indexdef(i.indexrelid)
	FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace IN ` + userSchemas + `
UNION ALL SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
	FROM pg_constraint WHERE connamespace IN ` + userSchemas + `
UNION ALL SELECT format('trigger %s %s', tgenabled, pg_get_triggerdef(oid)) FROM pg_trigger WHERE NOT tgisinternal
UNION ALL SELECT format('function %s %s %s %s', oid::regprocedure, prokind, md5(prosrc), proconfig)
	FROM pg_proc WHERE pronamespace IN ` + userSchemas + `
UNION ALL SELECT format('view %s %s', c.oid::regclass, pg_get_viewdef(c.oid))
	FROM pg_class c WHERE c.relkind IN ('v', 'm') AND c.relnamespace IN ` + userSchemas + `
UNION ALL SELECT format('rule %s %s %s', r.ev_class::regclass, r.rulename, r.ev_enabled)
	FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class WHERE c.relnamespace IN ` + userSchemas + `
UNION ALL SELECT format('type %s %s', oid::regtype, typtype) FROM pg_type WHERE typnamespace IN ` + userSchemas + `
UNION ALL SELECT format('enum %s %s', enumtypid::regtype, enumlabel) FROM pg_enum
UNION ALL SELECT format('policy %s %s', polrelid::regclass, polname) FROM pg_policy
UNION ALL SELECT format('extension %s %s', extname, extversion) FROM pg_extension
UNION ALL SELECT format('event trigger %s', evtname) FROM pg_event_trigger
UNION ALL SELECT format('large object %s', oid) FROM pg_largeobject_metadata
UNION ALL SELECT format('setting %s %s', setrole, setconfig) FROM pg_db_role_setting
	WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())`

// readShape reads the shape of the template at url; nil when the server
// is too old for copies to be reset.
func readShape(ctx context.Context, url string) (*shape, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	var version string
	if err := conn.QueryRow(ctx, `SHOW server_version_num`).Scan(&version); err != nil {
		return nil, err
	}
	if v, _ := strconv.Atoi(version); v < minResetVersion {
		return nil, nil
	}
	sh := &shape{}
	filled, err := sh.readTables(ctx, conn)
	if err != nil {
		return nil, err
	}
	sh.fingerSQL = fingerprintSQL(filled)
	if _, err := conn.Exec(ctx, emptySQL(sh.empty)); err != nil {
		return nil, nil // tables that cannot be emptied: copies are dropped
	}
	if sh.state, err = readStates(ctx, conn, sh.empty); err != nil {
		return nil, err
	}
	if sh.referrers, err = readReferrers(ctx, conn); err != nil {
		return nil, err
	}
	if err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(format('SELECT setval(%L, %s, %s);',
			format('%I.%I', schemaname, sequencename), coalesce(last_value, start_value), (last_value IS NOT NULL)::text), ' '), '')
		FROM pg_sequences WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`).Scan(&sh.sequences); err != nil {
		return nil, err
	}
	if err := conn.QueryRow(ctx, sh.fingerSQL).Scan(&sh.print); err != nil {
		return nil, err
	}
	return sh, nil
}

// readTables sorts the template's tables into those it left empty, kept
// in sh.empty, and those prepare filled, returned.
func (sh *shape) readTables(ctx context.Context, conn *pgx.Conn) (filled []string, err error) {
	rows, err := conn.Query(ctx, `SELECT oid::regclass::text FROM pg_class
		WHERE relkind IN ('r', 'p') AND relnamespace IN `+userSchemas+` ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	for _, table := range tables {
		var rows bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM `+table+`)`).Scan(&rows); err != nil {
			return nil, err
		}
		if rows {
			filled = append(filled, table)
		} else {
			sh.empty = append(sh.empty, table)
		}
	}
	return filled, nil
}

// readStates reads the state (stateSQL) of each of tables.
func readStates(ctx context.Context, conn *pgx.Conn, tables []string) (map[string]string, error) {
	rows, err := conn.Query(ctx, stateSQL, tables)
	if err != nil {
		return nil, err
	}
	states := map[string]string{}
	var table, state string
	_, err = pgx.ForEachRow(rows, []any{&table, &state}, func() error {
		states[table] = state
		return nil
	})
	return states, err
}

// readReferrers maps each table to the tables whose foreign keys refer to
// it: TRUNCATE empties a table only with those.
func readReferrers(ctx context.Context, conn *pgx.Conn) (map[string][]string, error) {
	rows, err := conn.Query(ctx, referrersSQL)
	if err != nil {
		return nil, err
	}
	referrers := map[string][]string{}
	var from, to string
	_, err = pgx.ForEachRow(rows, []any{&from, &to}, func() error {
		referrers[to] = append(referrers[to], from)
		return nil
	})
	return referrers, err
}

// changed returns the empty tables whose state in the copy differs from
// the template's, with every table referring to one of them, in the
// template's order: the tables a reset empties.
func (sh *shape) changed(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	states, err := readStates(ctx, conn, sh.empty)
	if err != nil {
		return nil, err
	}
	todo := map[string]bool{}
	var add func(table string)
	add = func(table string) {
		if todo[table] {
			return
		}
		todo[table] = true
		for _, r := range sh.referrers[table] {
			add(r)
		}
	}
	for _, table := range sh.empty {
		if states[table] != sh.state[table] {
			add(table)
		}
	}
	var tables []string
	for _, table := range sh.empty {
		if todo[table] {
			tables = append(tables, table)
		}
	}
	return tables, nil
}

// fingerprintSQL is the query of a database's fingerprint: the hash of
// schemaPrint's lines and of the rows of the tables filled.
func fingerprintSQL(filled []string) string {
	var b strings.Builder
	b.WriteString(`SELECT md5(string_agg(line, E'\n' ORDER BY line)) FROM (` + schemaPrint)
	for _, table := range filled {
		fmt.Fprintf(&b, "\nUNION ALL SELECT %s || coalesce(md5(string_agg(r::text, E'\\n' ORDER BY r::text)), '') FROM %s r",
			quote("rows "+table+" "), table)
	}
	b.WriteString(`) AS print(line)`)
	return b.String()
}

// quote is s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// reset makes the copy conn is connected to hold what its template holds
// again, and reports whether it did: it ends the copy's other
// connections, compares its fingerprint with the template's, empties the
// tables the template left empty that the test changed (with triggers
// off: the engine's refuse deletes) and sets the sequences back. Any
// failure leaves the copy to be dropped. Emptying only the tables changed
// keeps a reset cheap: TRUNCATE makes new files for a table and each of
// its indexes, most of a reset's work.
func (sh *shape) reset(ctx context.Context, conn *pgx.Conn) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// A backend that exits by itself between the listing and its
	// pg_terminate_backend (the finished test's connection, closed just
	// before) makes that call false: what counts is that none is left.
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid, 30000)
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		return false
	}
	var others int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&others); err != nil || others != 0 {
		return false
	}
	var print string
	if err := conn.QueryRow(ctx, sh.fingerSQL).Scan(&print); err != nil || print != sh.print {
		return false
	}
	tables, err := sh.changed(ctx, conn)
	if err != nil {
		return false
	}
	_, err = conn.Exec(ctx, emptySQL(tables)+" "+sh.sequences)
	return err == nil
}

// emptySQL empties tables, with triggers off (the engine's refuse
// deletes). readShape empties the template's empty tables too: a table
// TRUNCATE made holds other statistics of its indexes than one CREATE
// TABLE and CREATE INDEX made, and a copy's tables should have the same
// statistics whether the copy is new or was reset, and should look
// unchanged (stateSQL) after a reset.
func emptySQL(tables []string) string {
	stmt := `SET session_replication_role = replica;`
	if len(tables) > 0 {
		stmt += ` TRUNCATE ` + strings.Join(tables, ", ") + ` RESTART IDENTITY;`
	}
	return stmt
}
