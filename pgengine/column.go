package pgengine

import "github.com/jackc/pgx/v5/pgtype"

// column is an array argument of a statement (entryColumns) whose
// elements pgx encodes through pointers into it: pgtype.FlatArray, which
// pgx makes of a []int64 or a []string, gives each element boxed in an
// interface (an allocation for each number above 255 and each string),
// and a slice of another type goes through reflection. Its elements'
// pointer types have encode plans of their own: *pgtype.Int8 (an
// Int64Valuer, for bigint and integer) and *pgtype.Text (a TextValuer).
type column[T any] []T

// Dimensions are c's: one, nil for a nil c (a NULL array).
func (c column[T]) Dimensions() []pgtype.ArrayDimension {
	if c == nil {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(len(c)), LowerBound: 1}}
}

// Index is a pointer to element i.
func (c column[T]) Index(i int) any { return &c[i] }

// IndexType is the type of Index's pointers.
func (c column[T]) IndexType() any { return new(T) }
