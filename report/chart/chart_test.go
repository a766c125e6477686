package chart

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// wellFormed parses the SVG as XML to its end.
func wellFormed(t *testing.T, svg []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%.400s", err, svg)
		}
	}
}

func TestLinesLabelsBytesAndTimes(t *testing.T) {
	// 0 to 4 GiB over one minute from 08:06:00 UTC, 2026-11-30.
	start := int64(1796112360) * 1e6
	s := Series{Label: "pid 538 <python3>", X: []int64{start, start + 30e6, start + 60e6}, Y: []int64{0, 2 << 30, 4 << 30}}
	svg, err := Lines("used memory", "used", []Series{s}, true, 16, 8)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
	for _, want := range []string{"<svg", "GiB", "08:06:", "pid 538 &lt;python3&gt;"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if bytes.Contains(svg, []byte("<?xml")) || bytes.Contains(svg, []byte("http://fonts")) {
		t.Error("SVG has a prolog or a font URL")
	}
}

func TestBarsAndErrors(t *testing.T) {
	svg, err := Bars("at the OOM", []Bar{{"allocated", 4288 << 20}, {"requested", 64 << 20}, {"reserved but unallocated", 0}}, 16, 5)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
	for _, want := range []string{"allocated  4.19 GiB", "requested  64 MiB", "reserved but unallocated  0 B"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if _, err := Lines("x", "y", nil, true, 10, 5); err == nil {
		t.Error("no series: want an error")
	}
	if _, err := Lines("x", "y", []Series{{X: []int64{1, 2}, Y: []int64{1}}}, false, 10, 5); err == nil {
		t.Error("X and Y of different lengths: want an error")
	}
	if _, err := Bars("x", nil, 10, 5); err == nil {
		t.Error("no bars: want an error")
	}
}

func TestIEC(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{{0, "0 B"}, {1536, "1.5 KiB"}, {64 << 20, "64 MiB"}, {4288 << 20, "4.19 GiB"}, {1000, "1000 B"}} {
		if got := iec(c.in); got != c.want {
			t.Errorf("iec(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
