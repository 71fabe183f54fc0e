package migrate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/sessiontree/sessiontree/migrate"
)

// TestPostgresStepPassesTheFence applies, on a connection that tells the
// schema fence no schema (as pgtest's templates and a tool of one's own
// have), the engine's migrations and then one that writes sessions rows,
// as a later migration computing derived values again does: each step
// knows its own version (SchemaSetting, for its transaction), so the
// fence lets it through, and the connection's own writes after stay
// refused.
func TestPostgresStepPassesTheFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openPostgres(t)
	files := fstest.MapFS{}
	migs, err := migrate.Load(migrate.PostgresFiles)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migs {
		files[m.Name] = &fstest.MapFile{Data: []byte(m.SQL)}
	}
	later := fmt.Sprintf("%04d_later.sql", migrate.Latest(migs)+1)
	files[later] = &fstest.MapFile{Data: []byte(`INSERT INTO sessions (id, version, created_at, cwd, updated_at)
		VALUES ('later', 3, '2026-03-01T10:00:00.000Z', '/w', '2026-03-01T10:00:00.000Z');
		UPDATE sessions SET name = 'x'`)}
	if _, err := migrate.Up(ctx, db, files, pgOpts); err != nil {
		t.Fatalf("Up with a step writing sessions rows = %v", err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE sessions SET name = 'y'`); err == nil || !strings.Contains(err.Error(), "ST003") {
		t.Errorf("a write of the connection after the steps = %v; want the fence's refusal (ST003)", err)
	}
}
