package migrate_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/sessiontree/sessiontree/internal/testdb"
	"github.com/sessiontree/sessiontree/migrate"
)

// open opens a pool whose transactions begin IMMEDIATE, as Up needs.
func open(t testing.TB, path string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open(testdb.EngineDriver(), "file:"+path+"?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func tables(t testing.TB, db *sqlx.DB) []string {
	t.Helper()
	var names []string
	if err := db.Select(&names, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`); err != nil {
		t.Fatal(err)
	}
	return names
}

func TestUpAppliesOnceInOrder(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"))
	res, err := migrate.Up(ctx, db, migrate.Files, migrate.Options{ApplicationID: 7})
	if err != nil {
		t.Fatal(err)
	}
	migs, _ := migrate.Load(migrate.Files)
	latest := migrate.Latest(migs)
	if res.From != 0 || res.To != latest || len(res.Applied) != len(migs) {
		t.Errorf("Up() on a fresh database = %+v; want 0 -> %d, all applied", res, latest)
	}
	res, err = migrate.Up(ctx, db, migrate.Files, migrate.Options{ApplicationID: 7})
	if err != nil || len(res.Applied) != 0 || res.To != latest {
		t.Errorf("second Up() = %+v, %v; want nothing applied", res, err)
	}
	if v, err := migrate.Version(ctx, db); err != nil || v != latest {
		t.Errorf("Version() = %d, %v; want %d", v, err, latest)
	}
	var appID, userVersion int64
	_ = db.Get(&appID, `PRAGMA application_id`)
	_ = db.Get(&userVersion, `PRAGMA user_version`)
	if appID != 7 || userVersion != latest {
		t.Errorf("application_id, user_version = %d, %d; want 7, %d", appID, userVersion, latest)
	}
	if _, err := migrate.Up(ctx, db, migrate.Files, migrate.Options{ApplicationID: 8}); !errors.Is(err, migrate.ErrForeign) {
		t.Errorf("Up() with another application id = %v; want ErrForeign", err)
	}
}

// TestFailingStepLeavesNothing runs a migration whose last statement
// fails: none of its statements and no version record remain.
func TestFailingStepLeavesNothing(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"))
	fsys := fstest.MapFS{
		"0001_first.sql":  {Data: []byte("CREATE TABLE a (x);\nINSERT INTO a VALUES (1);")},
		"0002_broken.sql": {Data: []byte("CREATE TABLE b (x);\nINSERT INTO a VALUES (2);\nINSERT INTO missing VALUES (3);")},
		"0003_later.sql":  {Data: []byte("CREATE TABLE c (x);")},
	}
	res, err := migrate.Up(ctx, db, fsys, migrate.Options{})
	if err == nil {
		t.Fatal("Up() with a failing step succeeded")
	}
	if res.To != 1 {
		t.Errorf("Up() reached version %d; want 1", res.To)
	}
	if got, want := tables(t, db), []string{"a", migrate.Table}; !cmp.Equal(got, want) {
		t.Errorf("tables after the failure = %v; want %v (nothing of step 2 or 3)", got, want)
	}
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM a`); err != nil || n != 1 {
		t.Errorf("rows in a = %d, %v; want 1 (step 2's insert rolled back)", n, err)
	}
	var userVersion int
	if err := db.Get(&userVersion, `PRAGMA user_version`); err != nil || userVersion != 1 {
		t.Errorf("user_version = %d, %v; want 1", userVersion, err)
	}
	if v, _ := migrate.Version(ctx, db); v != 1 {
		t.Errorf("Version() = %d; want 1", v)
	}
	// Fixed, the rest applies.
	fsys["0002_broken.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE b (x);")}
	if res, err := migrate.Up(ctx, db, fsys, migrate.Options{}); err != nil || !cmp.Equal(res.Applied, []int64{2, 3}) {
		t.Errorf("Up() after the fix = %+v, %v; want 2 and 3 applied", res, err)
	}
}

func TestEditedMigrationIsDetected(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"))
	fsys := fstest.MapFS{"0001_first.sql": {Data: []byte("CREATE TABLE a (x);")}}
	if _, err := migrate.Up(ctx, db, fsys, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	fsys["0001_first.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE a (x, y);")}
	if _, err := migrate.Up(ctx, db, fsys, migrate.Options{}); !errors.Is(err, migrate.ErrChecksum) {
		t.Errorf("Up() after editing an applied migration = %v; want ErrChecksum", err)
	}
}

func TestNewerDatabaseIsRefused(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"))
	fsys := fstest.MapFS{
		"0001_first.sql":  {Data: []byte("CREATE TABLE a (x);")},
		"0002_second.sql": {Data: []byte("CREATE TABLE b (x);")},
	}
	if _, err := migrate.Up(ctx, db, fsys, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	delete(fsys, "0002_second.sql")
	if _, err := migrate.Up(ctx, db, fsys, migrate.Options{}); !errors.Is(err, migrate.ErrNewer) {
		t.Errorf("Up() with fewer migrations than applied = %v; want ErrNewer", err)
	}
}

// Pending lists what Up would apply and checks what Up checks, writing
// nothing.
func TestPending(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := open(t, path)
	fsys := fstest.MapFS{"0001_first.sql": {Data: []byte("CREATE TABLE a (x);")}}
	if _, err := migrate.Up(ctx, db, fsys, migrate.Options{ApplicationID: 7}); err != nil {
		t.Fatal(err)
	}
	ro, err := sqlx.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if p, err := migrate.Pending(ctx, ro, fsys, migrate.Options{ApplicationID: 7}); err != nil || len(p) != 0 {
		t.Errorf("Pending() with everything applied = %v, %v; want none", p, err)
	}
	fsys["0002_second.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE b (x);")}
	fsys["0003_third.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE c (x);")}
	p, err := migrate.Pending(ctx, ro, fsys, migrate.Options{ApplicationID: 7})
	if err != nil || len(p) != 2 || p[0].Version != 2 || p[1].Version != 3 {
		t.Errorf("Pending() = %v, %v; want 2 and 3", p, err)
	}
	if _, err := migrate.Pending(ctx, ro, fsys, migrate.Options{ApplicationID: 8}); !errors.Is(err, migrate.ErrForeign) {
		t.Errorf("Pending() with another application id = %v; want ErrForeign", err)
	}
	fsys["0001_first.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE a (x, y);")}
	if _, err := migrate.Pending(ctx, ro, fsys, migrate.Options{ApplicationID: 7}); !errors.Is(err, migrate.ErrChecksum) {
		t.Errorf("Pending() after editing an applied migration = %v; want ErrChecksum", err)
	}
	if got := tables(t, db); !cmp.Equal(got, []string{"a", "schema_migrations"}) {
		t.Errorf("tables after Pending() = %v; want only the first migration's", got)
	}
}

func TestBadNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"no number":      {"first.sql": {Data: []byte("SELECT 1;")}},
		"zero":           {"0000_zero.sql": {Data: []byte("SELECT 1;")}},
		"shared version": {"0001_a.sql": {Data: []byte("SELECT 1;")}, "1_b.sql": {Data: []byte("SELECT 1;")}},
	} {
		if _, err := migrate.Load(fsys); !errors.Is(err, migrate.ErrInvalid) {
			t.Errorf("Load(%s) = %v; want ErrInvalid", name, err)
		}
	}
}

// TestConcurrentUp opens a fresh file from several pools at once, as
// processes starting together would: every step is applied exactly once.
func TestConcurrentUp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	fsys := fstest.MapFS{
		"0001_counter.sql": {Data: []byte("CREATE TABLE applied (step INTEGER);\nINSERT INTO applied VALUES (1);")},
		"0002_again.sql":   {Data: []byte("INSERT INTO applied VALUES (2);")},
		"0003_more.sql":    {Data: []byte("INSERT INTO applied VALUES (3);")},
	}
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		db := open(t, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = migrate.Up(ctx, db, fsys, migrate.Options{ApplicationID: 9})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Up() #%d = %v", i, err)
		}
	}
	var steps []int
	if err := open(t, path).Select(&steps, `SELECT step FROM applied ORDER BY step`); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(steps, []int{1, 2, 3}) {
		t.Errorf("steps applied = %v; want each once", steps)
	}
}

// TestCurrent checks the fast path's one-row check: no records table is
// an error, every migration applied is current, and a record missing, one
// of a newer version or one of another checksum is not.
func TestCurrent(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"))
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := migrate.Current(ctx, db, migs); err == nil || ok {
		t.Errorf("Current() before Up = %v, %v; want an error", ok, err)
	}
	if _, err := migrate.Up(ctx, db, migrate.Files, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	if ok, err := migrate.Current(ctx, db, migs); err != nil || !ok {
		t.Errorf("Current() after Up = %v, %v; want true", ok, err)
	}
	if ok, err := migrate.Current(ctx, db, migs[:len(migs)-1]); err != nil || ok {
		t.Errorf("Current() of a program knowing one migration less = %v, %v; want false", ok, err)
	}
	names, err := migrate.Names(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := migrate.Current(ctx, db, names); err != nil || ok {
		t.Errorf("Current() of migrations without their checksums = %v, %v; want false", ok, err)
	}
	if _, err := db.Exec(`UPDATE `+migrate.Table+` SET checksum = 'x' || checksum WHERE version = ?`, migs[1].Version); err != nil {
		t.Fatal(err)
	}
	if ok, err := migrate.Current(ctx, db, migs); err != nil || ok {
		t.Errorf("Current() with a record of another checksum = %v, %v; want false", ok, err)
	}
	if _, err := db.Exec(`UPDATE `+migrate.Table+` SET checksum = substr(checksum, 2) WHERE version = ?`, migs[1].Version); err != nil {
		t.Fatal(err)
	}
	if ok, err := migrate.Current(ctx, db, migs); err != nil || !ok {
		t.Errorf("Current() with the checksum put back = %v, %v; want true", ok, err)
	}
	if _, err := db.Exec(`DELETE FROM `+migrate.Table+` WHERE version = ?`, migs[0].Version); err != nil {
		t.Fatal(err)
	}
	if ok, err := migrate.Current(ctx, db, migs); err != nil || ok {
		t.Errorf("Current() with a record missing = %v, %v; want false", ok, err)
	}
}

// TestNamesAreLoadsWithoutFiles checks that Names lists what Load does,
// without the files' text and checksums.
func TestNamesAreLoadsWithoutFiles(t *testing.T) {
	names, err := migrate.Names(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	migs, err := migrate.Load(migrate.Files)
	if err != nil {
		t.Fatal(err)
	}
	for i := range migs {
		migs[i].SQL, migs[i].Checksum = "", ""
	}
	if diff := cmp.Diff(migs, names); diff != "" {
		t.Errorf("Names() differs from Load() (-load +names):\n%s", diff)
	}
	bad := fstest.MapFS{"0001_a.sql": {}, "0001_b.sql": {}}
	if _, err := migrate.Names(bad); !errors.Is(err, migrate.ErrInvalid) {
		t.Errorf("Names() of two files of one version = %v; want ErrInvalid", err)
	}
}
