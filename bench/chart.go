package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// writeCharts draws one SVG per workload: a panel per shape, time per
// operation against session size on log–log axes, a line per backend and
// dashed lines for the floors.
func (rep *Report) writeCharts(dir string) error {
	for _, wl := range workloads {
		var shapes []string
		for _, s := range append(Shapes[:len(Shapes):len(Shapes)], ShapeCorpus, ShapeFleet, ShapeWriters) {
			if len(rep.sizesOf(wl.name, string(s))) > 0 {
				shapes = append(shapes, string(s))
			}
		}
		if len(shapes) == 0 {
			continue
		}
		var row []*plot.Plot
		for _, s := range shapes {
			p, err := rep.chartPanel(wl.name, s)
			if err != nil {
				return err
			}
			row = append(row, p)
		}
		const panelW, h = 4.2 * vg.Inch, 3.6 * vg.Inch
		w := panelW * vg.Length(len(row))
		c := vgsvg.New(w, h)
		dc := draw.New(c)
		tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2,
			PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		canvases := plot.Align([][]*plot.Plot{row}, tiles, dc)
		for i, p := range row {
			p.Draw(canvases[0][i])
		}
		f, err := os.Create(filepath.Join(dir, wl.name+".svg"))
		if err != nil {
			return err
		}
		if _, err := c.WriteTo(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func (rep *Report) chartPanel(workload, shape string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s · %s", workload, shape)
	p.X.Label.Text = "session size (entries)"
	switch Shape(shape) {
	case ShapeCorpus:
		p.X.Label.Text = "corpus size (sessions)"
	case ShapeFleet, ShapeWriters:
		p.X.Label.Text = "writers"
	}
	p.Y.Label.Text = "time per operation"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())

	sizes := rep.sizesOf(workload, shape)
	var ticks []plot.Tick
	for _, n := range sizes {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: sizeLabel(n)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = float64(sizes[0])/1.6, float64(sizes[len(sizes)-1])*1.6
	p.Y.Tick.Marker = durationTicks{}

	yMin, yMax := math.Inf(1), math.Inf(-1)
	for i, b := range rep.backends() {
		var xys plotter.XYs
		for _, n := range sizes {
			if r := rep.find(workload, shape, n, b); r != nil {
				xys = append(xys, plotter.XY{X: float64(n), Y: r.MedianNs})
				yMin, yMax = min(yMin, r.MedianNs), max(yMax, r.MedianNs)
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		col := rep.backendColor(b)
		line.Color, points.Color = col, col
		line.Width = vg.Points(1.5)
		points.Shape = plotutil.Shape(i)
		if b == backendFloor || b == backendFileFloor {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line, points)
		p.Legend.Add(b, line, points)
	}
	if math.IsInf(yMin, 1) {
		yMin, yMax = 1, 10
	}
	p.Y.Min, p.Y.Max = yMin/2, yMax*4 // room above for the legend
	return p, nil
}

// backendColors keep each backend's colour the same in every chart; the
// floors are black and grey.
var backendColors = map[string]color.Color{
	backendMemory:     color.RGBA{0x1b, 0x9e, 0x77, 0xff},
	backendJSONL:      color.RGBA{0xd9, 0x5f, 0x02, 0xff},
	backendEngine:     color.RGBA{0x1f, 0x78, 0xb4, 0xff},
	backendEngineCold: color.RGBA{0x8e, 0xc1, 0xe0, 0xff},
	backendStore:      color.RGBA{0x6a, 0x3d, 0x9a, 0xff},
	backendPi:         color.RGBA{0xe7, 0x29, 0x8a, 0xff},
	backendFloor:      color.Black,
	backendFileFloor:  color.Gray{0x88},
}

// piColors are the pi releases' colours, in the order they were
// measured: the first pi's magenta, then lighter.
var piColors = []color.Color{
	backendColors[backendPi],
	color.RGBA{0xf4, 0x9a, 0xc8, 0xff},
	color.RGBA{0xa6, 0x10, 0x5c, 0xff},
}

// backendColor is b's colour in every chart.
func (rep *Report) backendColor(b string) color.Color {
	for i, p := range rep.Pi {
		if p.Backend == b {
			return piColors[i%len(piColors)]
		}
	}
	return backendColors[b]
}

// durationTicks are log ticks at powers of ten, labelled as durations.
type durationTicks struct{}

func (durationTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		if v >= lo && v <= hi {
			out = append(out, plot.Tick{Value: v, Label: fmtDuration(v)})
		}
		for _, m := range []float64{2, 5} {
			if mv := v * m; mv >= lo && mv <= hi {
				out = append(out, plot.Tick{Value: mv})
			}
		}
	}
	slices.SortFunc(out, func(a, b plot.Tick) int {
		switch {
		case a.Value < b.Value:
			return -1
		case a.Value > b.Value:
			return 1
		}
		return 0
	})
	return out
}
