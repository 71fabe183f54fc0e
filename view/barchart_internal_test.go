package view

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAxisTicks checks the y axis's ticks: from 0 in steps of 1, 2 or 5
// times a power of ten up to the highest value or just above it, written
// with as many decimals as the step needs.
func TestAxisTicks(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		values []float64
		want   []string
	}{
		{nil, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{[]float64{0, 0}, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{[]float64{6, 1.25, 0.5}, []string{"0", "1", "2", "3", "4", "5", "6"}},
		{[]float64{375, 40}, []string{"0", "100", "200", "300", "400"}},
		{[]float64{0.011}, []string{"0.000", "0.002", "0.004", "0.006", "0.008", "0.010", "0.012"}},
		{[]float64{0.3}, []string{"0.00", "0.05", "0.10", "0.15", "0.20", "0.25", "0.30"}},
		{[]float64{1234.5}, []string{"0", "500", "1000", "1500"}},
		{[]float64{math.Inf(1)}, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
	} {
		var got []string
		for _, tk := range axisTicks(tt.values) {
			got = append(got, tk.label)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("axisTicks(%v) (-want +got):\n%s", tt.values, diff)
		}
	}
}
