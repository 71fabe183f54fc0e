package pgengine_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/sessiontree/sessiontree"
)

// BenchmarkAppendNotify measures what the follow notification (the
// trigger of migrate/postgres/0003, a pg_notify in every append's
// transaction) costs appends: notify=on is the engine as it runs,
// notify=off the same database with the trigger disabled, side by side
// in one run; one writer, and 16 writers on sessions of their own (NOTIFY
// takes a lock at commit that is shared by every notifying transaction
// of the database).
func BenchmarkAppendNotify(b *testing.B) {
	for _, writers := range []int{1, 16} {
		for _, notify := range []bool{true, false} {
			name := map[bool]string{true: "notify=on", false: "notify=off"}[notify]
			b.Run(map[int]string{1: "writers=1/", 16: "writers=16/"}[writers]+name, func(b *testing.B) {
				ctx := context.Background()
				db, url := openDB(b)
				if !notify {
					if _, err := connect(b, url).Exec(ctx, `ALTER TABLE sessions DISABLE TRIGGER sessions_notify_append`); err != nil {
						b.Fatal(err)
					}
				}
				d := userDraft("a message of ordinary length for a coding session, with some words in it")
				var failed atomic.Value
				b.SetParallelism(writers)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					st, err := db.CreateSession(ctx, sessiontree.SessionMeta{Cwd: "/bench"})
					if err != nil {
						failed.Store(err)
						return
					}
					for pb.Next() {
						if _, err := st.Append(ctx, d, sessiontree.AppendOptions{}); err != nil {
							failed.Store(err)
							return
						}
					}
				})
				if err, _ := failed.Load().(error); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
