package testdb

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"
)

// HoldWriteLock holds the write lock of the database file at path from a
// connection of the test's own ([Update]'s BEGIN IMMEDIATE), as another
// process writing would, until release is called or the test ends: for
// tests of what the engine does while it cannot write.
func HoldWriteLock(t testing.TB, path string) (release func()) {
	t.Helper()
	held, done, errc := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		errc <- Update(context.Background(), path, func(*sqlx.Tx) error {
			close(held)
			<-done
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-errc:
		t.Fatalf("hold the write lock of %s: %v", path, err)
	}
	var released bool
	release = func() {
		if released {
			return
		}
		released = true
		close(done)
		if err := <-errc; err != nil {
			t.Errorf("hold the write lock of %s: %v", path, err)
		}
	}
	t.Cleanup(release)
	return release
}
