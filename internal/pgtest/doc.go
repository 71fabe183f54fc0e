// Package pgtest gives tests a PostgreSQL database of their own.
//
// It owns the throwaway cluster it starts (a temporary folder, removed
// when the tests end) and the databases it creates from a [Template],
// each dropped when its test ends; it creates no table of its own (the
// template's preparation, such as an engine's migrations, does).
//
// # Where the server comes from
//
// [Main], called from a test binary's TestMain, finds a server once per
// test binary, when the first test asks for one (a binary whose tests
// need none, under -run or -short, starts none):
//
//   - SESSIONTREE_TEST_POSTGRES, when set, is the URL of a server the tests
//     may create and drop databases on (.ci/run starts one and sets it);
//   - otherwise, when PostgreSQL's programs are installed (initdb and
//     pg_ctl under /usr/lib/postgresql/*/bin or on PATH), Main starts a
//     throwaway cluster: a temporary folder holding a copy of a template
//     cluster (as the postgres user when the tests run as root, since the
//     server refuses to run as root), a free port on 127.0.0.1, fsync off;
//     it stops the server and removes the folder when the tests end. The
//     template is initdb's folder, kept by the first cluster of a user
//     and server version in the user's cache folder (sessiontree-pgtest):
//     copying it takes half the time of initdb, which starts the server
//     program several times. No server ever runs on the template;
//   - otherwise there is no server: tests that need one are skipped, except
//     under CI=true, where a missing server fails them.
//
// A binary whose PostgreSQL tests repeat on the second engine what it
// tests on SQLite calls [SkipPostgresUnderShort] first: under -short
// those tests are skipped, so the quick loop runs them on SQLite alone.
//
// A test that stops and starts its server (a restart a client must ride
// out) starts a cluster of its own with [Own], as Main does, and stops it
// with [Cluster.Down] and starts it again with [Cluster.Up]; the other
// tests' server is not disturbed.
//
// # Faults
//
// A [Proxy] sits between a client and the server and cuts connections at
// chosen points of the protocol ([Fault]): a message dropped on its way,
// the server's reply to a COMMIT lost, the error of a backend terminated
// or of a pooler that lost the server in place of a reply. Tests of what
// a client does when its connection fails mid-write use it; it starts no
// server of its own.
//
// # Databases
//
// A [Template] is a database prepared once per test binary (migrated, for
// an engine: [Migrated] is the PostgreSQL engine's); [Template.Database]
// gives each test a copy of it. A copy is made with CREATE DATABASE ...
// TEMPLATE, far faster than migrating again; when its test ends, the copy
// is reset (connections ended, the tables the template left empty and
// the test wrote to emptied, sequences set back) and handed to the next
// test, or dropped when the test changed its schema or the template's
// rows. A copy's reset runs on the connection its last reset ran on,
// kept open (idle, holding no lock) while the next test uses the copy:
// its caches filled, a reset takes ~2 ms of the server's CPU, against
// ~24 ms on a new connection, and ~40 ms for a new copy and its drop
// (PostgreSQL 15, 2 cores); the engine's tests take some 190 copies per
// binary. A test sees that connection among its database's backends.
//
// # Concurrency
//
// A [Template] and a [Proxy] are safe for concurrent use; Main runs once
// per binary.
package pgtest
