//go:build unix

package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The write-ahead log, written in one piece per commit.
//
// SQLite writes each frame of a commit to the -wal file with two calls
// of its VFS's xWrite: the 24-byte frame header, then the page. On this
// pure-Go SQLite each is a pwrite system call, about 1.5 µs apiece here
// whatever its size, so an append that changes five pages paid some 15
// µs of system calls, a third of the write connection's CPU in the fleet
// workload (BenchmarkFleet). walVFS is SQLite's "unix" VFS with the -wal
// file's writes gathered in memory and handed to the kernel as one
// pwrite: when the commit's last frame is complete (its header carries
// the database size, which only a commit frame does), or before anything
// reads, syncs, truncates, sizes or closes the file, or when walBufMax
// bytes are gathered. A frame header written over the frame SQLite has
// just read is not gathered: it is SQLite rewriting the checksums of a
// transaction that wrote some of its frames again in place
// (walRewriteChecksums, after the commit frame), and no page follows
// the commit frame's header then; gathered, it would be dropped at the
// end of the transaction, leaving the file a commit frame whose checksum
// recovery refuses, and a crash would lose that commit and every later
// one. (The frame just read may also be the one recovery found invalid
// after the last commit, where the next commit writes its first frame:
// its header is written at once too, and a commit frame's page, which
// then follows, still ends the commit.)
//
// What other connections and processes see does not change: a frame
// becomes visible only when SQLite writes the wal-index header in shared
// memory, after walFrames has written every frame of the commit, and by
// then the commit frame's write has flushed them. A flush that fails
// fails that xWrite, so SQLite rolls the commit back as it does when its
// own write fails, and the frames gathered are dropped with it. A crash
// before the flush loses only frames of a commit no one could see yet;
// the log's checksums make recovery ignore a commit written in part,
// as always. Synchronous settings work as before: xSync flushes first.
//
// A write transaction that spilled pages into the log and then rolled
// back leaves frames gathered that no commit frame will flush, and that
// no one needs. They must never be written later: once the connection
// gives up the log's write lock, another (in this process or another)
// may commit frames at those very places, and writing the stale ones
// over them would destroy that commit. So the database file's xShmLock
// drops what its -wal file gathered when the write lock is released
// (walShmLock); a commit has flushed everything by then.
//
// Only the engine's write connections (and the checkpointer's) open
// files through it (see DB.dsn): readers never write the log.
const walVFSName = "sessiontree-unix-walbuf"

// walVFSEnabled: the write connections open their files through walVFS.
const walVFSEnabled = true

// walBufMax bounds what one -wal file gathers before it writes: a
// commit of up to 29 frames of 4 KiB goes out in one call, a larger one
// in pieces of that size. unix's xWrite takes at most 128 KiB - 1 bytes
// a call (it masks the length to 17 bits).
const walBufMax = 120 << 10

// walFrameHeader is the size of a WAL frame's header; its bytes 4..7
// hold the database size in pages for a commit frame, 0 for the others.
const walFrameHeader = 24

var (
	walVFSOnce sync.Once
	walVFSErr  error

	// walVFS is the registered VFS: a copy of "unix" with its own name and
	// xOpen. SQLite keeps pointers to it and to walIO and dbIO, so they live
	// as long as the process; Go never moves a global.
	walVFS     sqlite3.Tsqlite3_vfs
	walVFSCStr = [...]byte{'s', 'e', 's', 's', 'i', 'o', 'n', 't', 'r', 'e', 'e', '-', 'u', 'n', 'i', 'x', '-', 'w', 'a', 'l', 'b', 'u', 'f', 0}
	unixCStr   = [...]byte{'u', 'n', 'i', 'x', 0}
	// unixVFS is the address of SQLite's "unix" VFS; unixOpen its xOpen.
	unixVFS, unixOpen uintptr

	// walIO are the io methods of -wal files: unix's, with the writes
	// gathered.
	walIO ioMethods

	// walFiles maps an open -wal file (its sqlite3_file address) to its
	// gathered writes.
	walFiles sync.Map // uintptr -> *walBuf

	// dbIO are the io methods of database files: unix's, with an
	// xShmLock that drops the -wal file's frames at the end of a write
	// transaction.
	dbIO ioMethods

	// dbNames maps an open database file (its sqlite3_file address) to
	// the name it was opened by, and walOfDB that name to the gathered
	// writes of the connection's -wal file. The name is the connection's
	// own copy, which the -wal file's name leads back to
	// (sqlite3_filename_database), so it tells the connections apart.
	dbNames sync.Map // uintptr -> uintptr
	walOfDB sync.Map // uintptr -> *walBuf

	// walWrites counts the xWrite calls SQLite made on -wal files, and
	// walSyscalls the writes that reached the kernel (see walStats).
	walWrites, walSyscalls atomic.Int64
	// walRewrites counts the frame headers written at once over the
	// frame just read: rewritten checksums, mostly (tests).
	walRewrites atomic.Int64

	// walFailWrites makes that many of the next writes that would reach
	// the kernel (flushes, and the writes made at once) fail with
	// SQLITE_FULL, writing nothing, as a full disk does (tests only).
	walFailWrites atomic.Int32
	// walAfterWrite, when set, runs after each write of a -wal file that
	// reached the kernel, before SQLite goes on (to a sync, the next
	// frames, the commit's end): a crash then leaves the files as they
	// are at that moment (tests only).
	walAfterWrite atomic.Pointer[func()]
)

// walBuf is one -wal file's gathered writes: buf holds the bytes of the
// file from off on.
type walBuf struct {
	off    int64
	buf    []byte
	commit bool    // the last write was a commit frame's header
	read   int64   // the offset of the last read, if no write came since; -1 if one did
	db     uintptr // the name of the connection's database file
}

// at turns an address SQLite handed over into a pointer. The memory is
// SQLite's (the libc heap of modernc), never Go's.
func at[T any](p uintptr) *T { return (*T)(*(*unsafe.Pointer)(unsafe.Pointer(&p))) }

// registerWALVFS registers walVFS, once.
func registerWALVFS() error {
	walVFSOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		unixVFS = sqlite3.Xsqlite3_vfs_find(tls, uintptr(unsafe.Pointer(&unixCStr[0])))
		if unixVFS == 0 {
			walVFSErr = errors.New("register SQLite VFS " + walVFSName + `: SQLite has no "unix" VFS`)
			return
		}
		walVFS = *at[sqlite3.Tsqlite3_vfs](unixVFS)
		walVFS.FpNext = 0
		walVFS.FzName = uintptr(unsafe.Pointer(&walVFSCStr[0]))
		unixOpen = walVFS.FxOpen
		*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&walVFS.FxOpen)) = walOpen
		if rc := sqlite3.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&walVFS)), 0); rc != sqlite3.SQLITE_OK {
			walVFSErr = fmt.Errorf("register SQLite VFS %s: SQLite result code %d", walVFSName, rc)
		}
	})
	return walVFSErr
}

// walOpen is walVFS's xOpen: unix's, then a -wal file gets walIO's
// methods and a database file dbIO's.
func walOpen(tls *libc.TLS, _ uintptr, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&unixOpen)))(tls, unixVFS, zName, pFile, flags, pOutFlags)
	f := at[sqlite3.Tsqlite3_file](pFile)
	if rc != sqlite3.SQLITE_OK || f.FpMethods == 0 {
		return rc
	}
	switch {
	case flags&sqlite3.SQLITE_OPEN_WAL != 0 && walIO.wrap(f.FpMethods, walMethods):
		b := &walBuf{buf: make([]byte, 0, 64<<10), read: -1, db: sqlite3.Xsqlite3_filename_database(tls, zName)}
		walFiles.Store(pFile, b)
		walOfDB.Store(b.db, b)
		f.FpMethods = uintptr(unsafe.Pointer(&walIO.ours))
	case flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0 && dbIO.wrap(f.FpMethods, dbMethods):
		dbNames.Store(pFile, zName)
		f.FpMethods = uintptr(unsafe.Pointer(&dbIO.ours))
	}
	return rc
}

// ioMethods are the io methods unix gives one kind of file (every -wal
// file gets the same, and every database file), and a copy of them with
// some of our own. SQLite keeps a pointer to the copy, which lives as
// long as the process.
type ioMethods struct {
	unix       uintptr // the address of unix's methods, once seen
	orig, ours sqlite3.Tsqlite3_io_methods
}

// ioMethodsMu guards the making of ioMethods.
var ioMethodsMu sync.Mutex

// wrap makes im from m, the methods unix gave a file, the first time,
// replace putting ours into the copy, and reports whether m are the
// methods im wraps (always, for unix files with the default locking).
func (im *ioMethods) wrap(m uintptr, replace func(ours *sqlite3.Tsqlite3_io_methods)) bool {
	ioMethodsMu.Lock()
	defer ioMethodsMu.Unlock()
	if im.unix == 0 {
		im.unix = m
		im.orig = *at[sqlite3.Tsqlite3_io_methods](m)
		im.ours = im.orig
		replace(&im.ours)
	}
	return m == im.unix
}

// walMethods puts the -wal file's methods into m.
func walMethods(m *sqlite3.Tsqlite3_io_methods) {
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&m.FxWrite)) = walWrite
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&m.FxRead)) = walRead
	*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&m.FxTruncate)) = walTruncate
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&m.FxSync)) = walSync
	*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&m.FxFileSize)) = walFileSize
	*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&m.FxFileControl)) = walFileControl
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&m.FxClose)) = walClose
}

// dbMethods puts the database file's methods into m.
func dbMethods(m *sqlite3.Tsqlite3_io_methods) {
	*(*func(*libc.TLS, uintptr, int32, int32, int32) int32)(unsafe.Pointer(&m.FxShmLock)) = walShmLock
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&m.FxClose)) = dbClose
}

// walWriteLock is the slot of the log's write lock among the -shm
// file's locks (WAL_WRITE_LOCK in SQLite's wal.c).
const walWriteLock = 0

// walShmLock is dbIO's xShmLock: unix's, after dropping what the
// connection's -wal file gathered when the log's write lock is released.
// A commit flushed its frames at its commit frame; what stays belongs to
// a transaction rolled back, and another connection may write the log
// as soon as the lock is free.
func walShmLock(tls *libc.TLS, pFile uintptr, ofst, n, flags int32) int32 {
	if flags == sqlite3.SQLITE_SHM_UNLOCK|sqlite3.SQLITE_SHM_EXCLUSIVE && ofst <= walWriteLock && walWriteLock < ofst+n {
		if name, ok := dbNames.Load(pFile); ok {
			if b, ok := walOfDB.Load(name); ok {
				b.(*walBuf).drop()
			}
		}
	}
	return (*(*func(*libc.TLS, uintptr, int32, int32, int32) int32)(unsafe.Pointer(&dbIO.orig.FxShmLock)))(tls, pFile, ofst, n, flags)
}

// dbClose is dbIO's xClose.
func dbClose(tls *libc.TLS, pFile uintptr) int32 {
	dbNames.Delete(pFile)
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&dbIO.orig.FxClose)))(tls, pFile)
}

// bufOf returns the gathered writes of the -wal file at pFile.
func bufOf(pFile uintptr) *walBuf {
	b, _ := walFiles.Load(pFile)
	return b.(*walBuf)
}

// flush writes what b gathered with one call of unix's xWrite. What it
// gathered is dropped either way: after a failed write SQLite gives up
// the frames (it rolls back, or fails the read that needed them).
func (b *walBuf) flush(tls *libc.TLS, pFile uintptr) int32 {
	if len(b.buf) == 0 {
		return sqlite3.SQLITE_OK
	}
	rc := unixWrite(tls, pFile, uintptr(unsafe.Pointer(&b.buf[0])), int32(len(b.buf)), b.off)
	b.drop()
	return rc
}

// drop forgets what b gathered.
func (b *walBuf) drop() {
	b.buf = b.buf[:0]
	b.commit = false
}

// unixWrite hands n bytes at p to unix's xWrite, one system call, and
// counts it (walStats).
func unixWrite(tls *libc.TLS, pFile, p uintptr, n int32, off int64) int32 {
	if walFailWrites.Load() > 0 && walFailWrites.Add(-1) >= 0 {
		return sqlite3.SQLITE_FULL
	}
	walSyscalls.Add(1)
	rc := (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&walIO.orig.FxWrite)))(tls, pFile, p, n, off)
	if after := walAfterWrite.Load(); after != nil && rc == sqlite3.SQLITE_OK {
		(*after)()
	}
	return rc
}

// walWrite gathers a write that continues the gathered ones, and flushes
// at the end of a commit frame. A frame's header written over the frame
// just read (its checksum rewritten, or a frame recovery found invalid
// written anew) is written at once.
func walWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	walWrites.Add(1)
	b := bufOf(pFile)
	rewrite := iAmt == walFrameHeader && iOfst == b.read
	b.read = -1
	data := unsafe.Slice(at[byte](zBuf), iAmt)
	if rewrite {
		walRewrites.Add(1)
		if rc := b.flush(tls, pFile); rc != sqlite3.SQLITE_OK {
			return rc
		}
		// Recovery reads frames too, the last one where the next commit
		// writes its first frame. A commit frame's header written there
		// is the commit's own, and its page, which follows, ends it.
		rc := unixWrite(tls, pFile, zBuf, iAmt, iOfst)
		b.commit = rc == sqlite3.SQLITE_OK && commitHeader(data)
		return rc
	}
	commit := b.commit
	if len(b.buf) > 0 && (iOfst != b.off+int64(len(b.buf)) || len(b.buf)+int(iAmt) > walBufMax) {
		if rc := b.flush(tls, pFile); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if int(iAmt) > walBufMax {
		return unixWrite(tls, pFile, zBuf, iAmt, iOfst)
	}
	if len(b.buf) == 0 {
		b.off = iOfst
	}
	b.buf = append(b.buf, data...)
	switch {
	case commit:
		// The commit frame's page: the commit is complete.
		return b.flush(tls, pFile)
	case commitHeader(data):
		b.commit = true
	}
	return sqlite3.SQLITE_OK
}

// commitHeader tells whether a write is a commit frame's header: a
// frame header whose bytes 4..7, the database's size, are not 0.
func commitHeader(data []byte) bool {
	return len(data) == walFrameHeader && binary.BigEndian.Uint32(data[4:8]) != 0
}

// The other methods of walIO write out what the file gathered, then
// do unix's work.

func walRead(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	b := bufOf(pFile)
	if rc := b.flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	b.read = iOfst
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&walIO.orig.FxRead)))(tls, pFile, zBuf, iAmt, iOfst)
}

func walTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	if rc := bufOf(pFile).flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&walIO.orig.FxTruncate)))(tls, pFile, size)
}

func walSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	if rc := bufOf(pFile).flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&walIO.orig.FxSync)))(tls, pFile, flags)
}

func walFileSize(tls *libc.TLS, pFile, pSize uintptr) int32 {
	if rc := bufOf(pFile).flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&walIO.orig.FxFileSize)))(tls, pFile, pSize)
}

func walFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	if rc := bufOf(pFile).flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&walIO.orig.FxFileControl)))(tls, pFile, op, pArg)
}

func walClose(tls *libc.TLS, pFile uintptr) int32 {
	b := bufOf(pFile)
	rc := b.flush(tls, pFile)
	walFiles.Delete(pFile)
	walOfDB.CompareAndDelete(b.db, b)
	if crc := (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&walIO.orig.FxClose)))(tls, pFile); rc == sqlite3.SQLITE_OK {
		rc = crc
	}
	return rc
}

// walStats returns how many writes SQLite made on -wal files through
// walVFS and how many reached the kernel.
func walStats() (writes, syscalls int64) { return walWrites.Load(), walSyscalls.Load() }
