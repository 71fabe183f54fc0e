package sessiontree_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sessiontree/sessiontree"
)

// TestHeartbeatRefusesNonPositiveInterval checks that an interval of zero
// or less (a third of a ttl of 2ns, say) is refused with ErrBadClaim, at
// once, instead of panicking in time.NewTicker.
func TestHeartbeatRefusesNonPositiveInterval(t *testing.T) {
	for _, interval := range []int64{0, -1} {
		err := sessiontree.Heartbeat(context.Background(), nil, time.Duration(interval))
		if !errors.Is(err, sessiontree.ErrBadClaim) {
			t.Errorf("Heartbeat(interval %d) = %v; want ErrBadClaim", interval, err)
		}
	}
}
