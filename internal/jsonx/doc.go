// Package jsonx is a small, strict JSON scanner used to read the few
// top-level fields of a session entry without decoding its payload.
//
// It validates the whole input (RFC 8259 grammar, no trailing data) while
// it walks it, so a caller that only needs "type", "id" and "parentId" of a
// one-megabyte message still learns whether the line is valid JSON, at the
// cost of one pass over its bytes. Values are returned as sub-slices of the
// input; nothing is copied. Invalid UTF-8 inside strings is accepted and
// kept byte for byte, as encoding/json accepts it.
//
// It owns what every backend takes as valid entry JSON: the grammar and
// the nesting bound ([MaxDepth]), so that an entry is refused alike,
// before it is stored, whatever the backend. It stores and decodes
// nothing of its own.
package jsonx
