package canceltest_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/sessiontree/sessiontree/internal/canceltest"
)

func TestPoints(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		max  int
		want []int64
	}{
		{0, 5, nil},
		{3, 5, []int64{1, 2, 3}},
		{5, 5, []int64{1, 2, 3, 4, 5}},
		{100, 5, []int64{1, 25, 50, 75, 100}},
		{100, 1, []int64{100}},
	} {
		if got := canceltest.Points(tc.n, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("Points(%d, %d) = %v; want %v", tc.n, tc.max, got, tc.want)
		}
	}
}

// TestAt checks that a Ctx is cancelled at its k-th check, not before,
// and that contexts derived from it end with it.
func TestAt(t *testing.T) {
	c := canceltest.At(3)
	defer c.Stop()
	for i := 1; i < 3; i++ {
		if err := c.Err(); err != nil {
			t.Fatalf("check %d = %v; want nil", i, err)
		}
	}
	if err := c.Err(); !errors.Is(err, context.Canceled) || c.Checks() != 3 {
		t.Errorf("check %d = %v; want the third, context.Canceled", c.Checks(), err)
	}
	d := canceltest.At(2)
	defer d.Stop()
	child, cancel := context.WithCancel(d) // a check: WithCancel asks for Done
	defer cancel()
	_ = d.Err()
	<-child.Done()
}
