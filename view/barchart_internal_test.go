package view

import (
	"bytes"
	"math"
	"regexp"
	"strings"
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

// TestBarChartsOddValues checks that values a bar cannot show (below 0,
// not a number, infinite) draw empty bars, with their figure still in
// the tooltip, and never write NaN or Inf into the SVG.
func TestBarChartsOddValues(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	p := barPanel{title: "t", yLabel: "y", keys: []string{"a", "b", "c", "d"},
		values: []float64{-1, math.NaN(), math.Inf(1), 2}, tips: []string{"a: -1", "b: NaN", "c: +Inf", "d: 2"}}
	if err := writeBarCharts(&b, 500, 400, p); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if strings.Contains(svg, "NaN\"") || strings.Contains(svg, "Inf\"") {
		t.Errorf("chart has a NaN or Inf attribute:\n%s", svg)
	}
	heights := regexp.MustCompile(`height="([-0-9.]+)" fill="`+barColor+`"><title>([^<]*)</title>`).FindAllStringSubmatch(svg, -1)
	if len(heights) != 4 {
		t.Fatalf("chart has %d bars; want 4:\n%s", len(heights), svg)
	}
	for i, h := range heights {
		if empty := h[1] == "0.00"; empty != (i < 3) || h[2] != p.tips[i] {
			t.Errorf("bar %d: height %s, tooltip %q; want it empty %v, tooltip %q", i, h[1], h[2], i < 3, p.tips[i])
		}
	}
}
