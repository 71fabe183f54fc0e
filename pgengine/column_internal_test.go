package pgengine

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestColumnEncodes: a column goes to the server as the array of its
// values, an invalid element as NULL and a nil column as a NULL array,
// through pgx (database/sql passes it on unchanged).
func TestColumnEncodes(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, Options{})
	ints := column[pgtype.Int8]{int8Of(7), {}, int8Of(1 << 40)}
	texts := column[pgtype.Text]{textOf("a"), nullable(""), textOf(`{"x":"\u00e9"}`)}
	var got struct {
		Ints    string `db:"ints"`
		Depths  string `db:"depths"`
		Texts   string `db:"texts"`
		NilNull bool   `db:"nil_null"`
	}
	err := db.db.GetContext(context.Background(), &got, `SELECT $1::bigint[]::text AS ints, $2::integer[]::text AS depths,
		$3::text[]::text AS texts, $4::bigint[] IS NULL AS nil_null`,
		ints, column[pgtype.Int8]{int8Of(3), {}}, texts, column[pgtype.Int8](nil))
	if err != nil {
		t.Fatal(err)
	}
	if got.Ints != "{7,NULL,1099511627776}" || got.Depths != "{3,NULL}" ||
		got.Texts != `{a,NULL,"{\"x\":\"\\u00e9\"}"}` || !got.NilNull {
		t.Errorf("arrays sent = %+v", got)
	}
}
