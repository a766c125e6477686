// Package chart draws the daily report's charts as SVG with gonum's
// plotting library (gonum.org/v1/plot, vgsvg): memory over time as lines,
// memory breakdowns as horizontal bars. Sizes are bytes and are labelled in
// IEC units (KiB, MiB, GiB); times are microseconds since the Unix epoch and
// are labelled as UTC clock times. The SVG names its fonts (Liberation
// Sans, falling back to the viewer's sans-serif) rather than embedding
// them, and references nothing outside itself.
package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// MaxPoints bounds the points of one series; longer series are an error
// (the daily report's are at most a few hundred).
const MaxPoints = 10_000

// Series is one line: Y bytes at X times (µs since the epoch), or at X
// positions when the chart is not timed.
type Series struct {
	Label string
	X, Y  []int64
}

// Bar is one bar: a value in bytes.
type Bar struct {
	Label string
	Bytes int64
}

// palette: distinguishable on white and for the common colour blindnesses
// (Okabe and Ito).
var palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {120, 120, 120, 255}, {240, 228, 66, 255},
}

// Lines draws series against time (timed) or position, sized w×h
// centimetres. Errors: no series, a series whose X and Y differ in length
// or that has more than MaxPoints points, or a drawing error.
func Lines(title, yLabel string, series []Series, timed bool, w, h float64) ([]byte, error) {
	if len(series) == 0 {
		return nil, errors.New("chart: no series")
	}
	p := newPlot(title)
	p.Y.Label.Text = yLabel
	p.Y.Tick.Marker = bytesTicks{}
	p.Y.Min = 0
	if timed {
		p.X.Label.Text = "time (UTC)"
		p.X.Tick.Marker = clockTicks{}
	}
	for i, s := range series {
		if len(s.X) != len(s.Y) || len(s.X) > MaxPoints {
			return nil, fmt.Errorf("chart: series %q: %d times, %d values (at most %d)", s.Label, len(s.X), len(s.Y), MaxPoints)
		}
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j].X = float64(s.X[j])
			pts[j].Y = float64(s.Y[j])
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("chart: series %q: %w", s.Label, err)
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.6)
		if i >= len(palette) {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(l)
		p.Legend.Add(clip(s.Label, 48), l)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.Padding = vg.Points(1)
	p.Add(plotter.NewGrid())
	return render(p, w, h)
}

// Bars draws horizontal bars, one per value, labelled with their sizes.
func Bars(title string, bars []Bar, w, h float64) ([]byte, error) {
	if len(bars) == 0 {
		return nil, errors.New("chart: no bars")
	}
	p := newPlot(title)
	vals := make(plotter.Values, len(bars))
	names := make([]string, len(bars))
	for i, b := range bars {
		// gonum stacks horizontal bars from the bottom: the first bar on top.
		j := len(bars) - 1 - i
		vals[j] = float64(max(b.Bytes, 0))
		names[j] = clip(b.Label, 32) + "  " + iec(float64(b.Bytes))
	}
	bc, err := plotter.NewBarChart(vals, vg.Points(14))
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	bc.Horizontal = true
	bc.Color = palette[0]
	bc.LineStyle.Width = 0
	p.Add(bc)
	p.NominalY(names...)
	p.X.Tick.Marker = bytesTicks{}
	p.X.Min = 0
	p.Add(&plotter.Grid{Vertical: plotter.DefaultGridLineStyle})
	return render(p, w, h)
}

func newPlot(title string) *plot.Plot {
	p := plot.New()
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 11)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, 9)
		ax.Tick.Label.Font = font.From(sans, 8)
	}
	p.Legend.TextStyle.Font = font.From(sans, 8)
	return p
}

func render(p *plot.Plot, w, h float64) ([]byte, error) {
	c := vgsvg.New(vg.Length(w)*vg.Centimeter, vg.Length(h)*vg.Centimeter)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	out := buf.Bytes()
	// Inline in HTML: no XML prolog or doctype.
	if i := bytes.Index(out, []byte("<svg")); i > 0 {
		out = out[i:]
	}
	return out, nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// bytesTicks labels a byte axis in IEC units at 1, 2 or 5 times a power
// of two's unit.
type bytesTicks struct{}

func (bytesTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return []plot.Tick{{Value: lo, Label: iec(lo)}}
	}
	unit := 1.0
	for _, u := range []float64{1 << 40, 1 << 30, 1 << 20, 1 << 10} {
		if hi >= u {
			unit = u
			break
		}
	}
	span := (hi - lo) / unit
	step := math.Pow(10, math.Floor(math.Log10(span/4)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 6 {
			step *= m
			break
		}
	}
	step *= unit
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step/1e6 && len(out) < 50; v += step {
		out = append(out, plot.Tick{Value: v, Label: iec(v)})
	}
	return out
}

// clockTicks labels a time axis (µs since the epoch) with UTC clock times.
type clockTicks struct{}

func (clockTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	span := time.Duration((hi - lo) * 1e3)
	layout := "15:04:05"
	switch {
	case span < 10*time.Second:
		layout = "15:04:05.00"
	case span < 2*time.Minute:
		layout = "15:04:05.0"
	case span > 48*time.Hour:
		layout = "01-02 15:04"
	}
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = time.UnixMicro(int64(ts[i].Value)).UTC().Format(layout)
		}
	}
	return ts
}

// iec prints bytes with IEC units, at most three significant digits.
func iec(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for math.Abs(b) >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	s := fmt.Sprintf("%.3g", b)
	if strings.Contains(s, "e") {
		s = fmt.Sprintf("%.0f", b)
	}
	return s + " " + units[i]
}
