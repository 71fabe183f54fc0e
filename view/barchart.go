package view

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The usage chart's bar charts are drawn here, a few dozen SVG elements,
// rather than with a plotting library, because a library's cost falls on
// every command, not only on `usage --chart`: Go runs the init of every
// linked package at start-up, and gonum.org/v1/plot (which drew them
// until 2026-12-06) linked go-latex's symbol tables and fonts, x/text's
// charmaps and image codecs into the CLI. Drawing them here took 0.3 to
// 0.7 ms off every command (medians of 61 interleaved runs: `--help` 5.46
// to 4.75 ms, `info` 6.86 to 6.26 ms, `context --json` 10.13 to 9.81
// ms), 156 of `--help`'s 825 page faults and 8.4 MB off the binary
// (38.9 to 30.5 MB).

// A barPanel is one bar chart: a bar per key, its height the value.
type barPanel struct {
	title, yLabel string
	keys          []string
	values        []float64
	// tips are the bars' tooltips (an SVG <title> each), one per key.
	tips []string
}

// Bar chart geometry, in points (the SVG's user units are points).
const (
	barTitleSize  = 12.0
	barLabelSize  = 10.0
	barCharWidth  = 0.55 * barLabelSize // a label character's mean width, for room
	barMaxWidth   = 14.0
	barFill       = 0.7 // of a bar's slot
	barTop        = 28.0
	barYLabelRoom = 22.0
	barRightPad   = 12.0
	// barLabelRunes is the longest key label drawn under a bar; longer
	// keys are cut, which keeps the plot above them from being squeezed
	// flat by one long directory.
	barLabelRunes = 32
)

// sin60 is the sine of the 60° the key labels are turned by.
var sin60 = math.Sqrt(3) / 2

// writeBarCharts writes panels one above the other as an SVG image of
// width by height points, their plots aligned.
func writeBarCharts(w io.Writer, width, height float64, panels ...barPanel) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%gpt" height="%gpt" viewBox="0 0 %g %g" font-family="sans-serif">
<rect width="100%%" height="100%%" fill="#ffffff"/>
`, width, height, width, height)
	for i := range panels {
		panels[i].values = drawable(panels[i].values)
	}
	ph := height / float64(max(len(panels), 1))
	left := barLeft(width, panels)
	for i, p := range panels {
		p.write(&b, left, width-barRightPad, float64(i)*ph, ph)
	}
	b.WriteString("</svg>\n")
	if _, err := b.WriteTo(w); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}

// drawable returns values with those a bar cannot show (below 0, not a
// number or infinite: a malformed usage record) as 0; a bar's tooltip
// still tells its figure.
func drawable(values []float64) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		if v > 0 && !math.IsInf(v, 1) {
			out[i] = v
		}
	}
	return out
}

// barLeft returns where the panels' plots start: after the y axis's
// label and tick labels, and far enough for the first key's label, which
// slants down to the left of its bar.
func barLeft(width float64, panels []barPanel) float64 {
	left, bars, longest := 0.0, 1, 0
	for _, p := range panels {
		for _, t := range axisTicks(p.values) {
			left = max(left, float64(len(t.label))*barCharWidth)
		}
		bars = max(bars, len(p.values))
		if len(p.keys) > 0 {
			longest = max(longest, utf8.RuneCountInString(cutLabel(p.keys[0])))
		}
	}
	left += barYLabelRoom + 10
	slot := (width - barRightPad - left) / float64(bars)
	return max(left, float64(longest)*barCharWidth/2-slot/2+4)
}

// write draws the panel between x0 and x1, from y0 down ph points.
func (p barPanel) write(b *bytes.Buffer, x0, x1, y0, ph float64) {
	labels := make([]string, len(p.keys))
	longest := 0
	for i, k := range p.keys {
		labels[i] = cutLabel(k)
		longest = max(longest, utf8.RuneCountInString(labels[i]))
	}
	base := y0 + ph - 12 - float64(longest)*barCharWidth*sin60
	top := y0 + barTop
	fmt.Fprintf(b, "<g>\n<text x=\"%.2f\" y=\"%.2f\" font-size=\"%g\" text-anchor=\"middle\">%s</text>\n",
		(x0+x1)/2, y0+18, barTitleSize, svgText(p.title))
	fmt.Fprintf(b, "<text transform=\"translate(%.2f %.2f) rotate(-90)\" font-size=\"%g\" text-anchor=\"middle\">%s</text>\n",
		barYLabelRoom/2+4, (top+base)/2, barTitleSize, svgText(p.yLabel))
	ticks := axisTicks(p.values)
	yMax := ticks[len(ticks)-1].value
	if m := slices.Max(append([]float64{0}, p.values...)); m > 0 {
		yMax = max(yMax, m*1.1)
	}
	y := func(v float64) float64 { return base - v/yMax*(base-top) }
	for _, t := range ticks {
		fmt.Fprintf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2[2]f\" stroke=\"#dddddd\"/>\n", x0, y(t.value), x1)
		fmt.Fprintf(b, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%g\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>\n",
			x0-4, y(t.value), barLabelSize, t.label)
	}
	fmt.Fprintf(b, "<path d=\"M%.2f %.2fV%.2fH%.2f\" fill=\"none\" stroke=\"#000000\"/>\n", x0, top, base, x1)
	slot := (x1 - x0) / float64(max(len(p.values), 1))
	bw := min(barMaxWidth, barFill*slot)
	for i, v := range p.values {
		cx := x0 + (float64(i)+0.5)*slot
		fmt.Fprintf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>%s</title></rect>\n",
			cx-bw/2, y(v), bw, base-y(v), barColor, svgText(p.tips[i]))
		fmt.Fprintf(b, "<text transform=\"translate(%.2f %.2f) rotate(-60)\" font-size=\"%g\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>\n",
			cx, base+6, barLabelSize, svgText(labels[i]))
	}
	b.WriteString("</g>\n")
}

// cutLabel shortens a key to barLabelRunes, keeping its end (the more
// telling part of a directory or a model's name).
func cutLabel(k string) string {
	r := []rune(k)
	if len(r) <= barLabelRunes {
		return k
	}
	return "…" + string(r[len(r)-barLabelRunes+1:])
}

// svgText escapes s for the text of an SVG document: XML's markup
// characters as entities, and a character XML does not allow (a control
// character but tab and line breaks, a byte that is not UTF-8, U+FFFE,
// U+FFFF) as U+FFFD, so a model's or a directory's name from a session
// file cannot make the whole document unreadable.
func svgText(s string) string {
	return html.EscapeString(strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff {
			return r
		}
		return utf8.RuneError
	}, s))
}

// An axisTick is a value on a chart's y axis and how it is written.
type axisTick struct {
	value float64
	label string
}

// axisTicks returns the y axis's ticks for values: from 0 in round steps
// (1, 2 or 5 times a power of ten) to at least the highest value, 3 to
// 7 of them; 0 and 1 when no value is above 0.
func axisTicks(values []float64) []axisTick {
	top := 0.0
	for _, v := range values {
		top = max(top, v)
	}
	if !(top > 0) || math.IsInf(top, 1) {
		top = 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(top/4)))
	step := mag * 10
	for _, m := range []float64{1, 2, 5} {
		if top/(m*mag) <= 6 {
			step = m * mag
			break
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step))))
	var ticks []axisTick
	for i := 0; ; i++ {
		v := float64(i) * step
		ticks = append(ticks, axisTick{v, strconv.FormatFloat(v, 'f', decimals, 64)})
		if v >= top {
			return ticks
		}
	}
}
