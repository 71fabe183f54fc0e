// Package fsx holds the rules for the paths a user gives the library and
// the command: what may be read as a session file or a database, and
// where a file written to a path goes.
//
// # Reading
//
// A session file or a database is a regular file. [Open] refuses
// anything else, a named pipe, a device, a socket, a directory, with a
// [*sessiontree.NotRegularFileError] before it reads a byte: reading a
// named pipe blocks until someone writes to it, and reading /dev/zero
// never ends.
//
// # Writing
//
// A write to a path that is a symbolic link goes to the link's target;
// the link stays. A path naming something other than a regular file (a
// device such as /dev/null or /dev/stdout on a terminal or a pipe, a
// named pipe) is written straight to, never replaced. See [WriteTarget].
//
// # Concurrency
//
// The functions hold no state and are safe for concurrent use.
package fsx
