package testdb

import (
	"database/sql"
	"sync"

	"modernc.org/sqlite"

	"github.com/sessiontree/sessiontree/engine"
)

// engineDriverName is the name EngineDriver registers.
const engineDriverName = "sqlite-engine-functions"

var registerEngineDriver = sync.OnceValue(func() error {
	d := &sqlite.Driver{}
	if err := engine.RegisterFunctions(d); err != nil {
		return err
	}
	sql.Register(engineDriverName, d)
	return nil
})

// EngineDriver returns the name of a database/sql driver whose
// connections have the SQL functions the engine defines on its own
// (engine.RegisterFunctions), for a test's connections behind the
// engine's back: the engine's migrations and the search_text view call
// them. It panics if they cannot be registered, a bug of the engine.
func EngineDriver() string {
	if err := registerEngineDriver(); err != nil {
		panic(err)
	}
	return engineDriverName
}
