// Package sizes renders a size as a part of another ("1.89 GiB of 1.95
// GiB") so that the two read differently whenever they differ: a reader
// told "1.9 GiB of 1.9 GiB" takes it for 100%.
package sizes

import (
	"fmt"
	"math"
	"strings"
)

// units are the IEC units the formatters print (humanize.IBytes,
// pytorchtext.FormatSize), with their sizes in bytes.
var units = map[string]float64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60}

// maxDecimals bounds the decimals Of adds; past them the sizes are given
// in bytes.
const maxDecimals = 6

// Of renders part and whole, sizes in bytes, with format (which prints a
// number, a space and an IEC unit: "1.9 GiB", "1.89 GiB"). Where format
// prints the two alike though they differ (1934 MiB of 1995 MiB:
// humanize's "1.9 GiB" both), both are printed in whole's unit with the
// fewest more decimals that tell them apart ("1.89 GiB", "1.95 GiB"), or,
// past maxDecimals, in bytes. Equal sizes, and sizes format already tells
// apart, are printed as format prints them.
func Of(part, whole int64, format func(int64) string) (p, w string) {
	p, w = format(part), format(whole)
	if part == whole || p != w {
		return p, w
	}
	num, unit, ok := strings.Cut(w, " ")
	scale, known := units[unit]
	if !ok || !known {
		return fmt.Sprintf("%d bytes", part), fmt.Sprintf("%d bytes", whole)
	}
	d := 1
	if _, frac, ok := strings.Cut(num, "."); ok {
		d = len(frac) + 1
	}
	for ; d <= maxDecimals; d++ {
		p = fmt.Sprintf("%.*f %s", d, float64(part)/scale, unit)
		w = fmt.Sprintf("%.*f %s", d, float64(whole)/scale, unit)
		if p != w {
			return p, w
		}
	}
	return fmt.Sprintf("%d bytes", part), fmt.Sprintf("%d bytes", whole)
}

// Like renders n bytes in the unit and with the decimals of like, a size
// Of rendered ("20.50 GiB"), so that a size named after it reads alike;
// with format where like is in no IEC unit ("123 bytes").
func Like(n int64, like string, format func(int64) string) string {
	num, unit, ok := strings.Cut(like, " ")
	scale, known := units[unit]
	if !ok || !known {
		return format(n)
	}
	d := 0
	if _, frac, ok := strings.Cut(num, "."); ok {
		d = len(frac)
	}
	return fmt.Sprintf("%.*f %s", d, float64(n)/scale, unit)
}

// Percent renders part as a percentage of whole (whole > 0) with no
// decimals, or with the fewest that keep a part short of the whole from
// reading "100%" and a part above nothing from reading "0%" ("99.7%").
func Percent(part, whole int64) string {
	if whole <= 0 {
		return "?%"
	}
	v := 100 * float64(part) / float64(whole)
	for d := 0; d < maxDecimals; d++ {
		s := fmt.Sprintf("%.*f", d, v)
		r := roundTo(v, d)
		if (part == whole || r != 100) && (part == 0 || r != 0) {
			return s + "%"
		}
	}
	return fmt.Sprintf("%.*f%%", maxDecimals, v)
}

// roundTo rounds v to d decimals as %.*f does (to the nearest).
func roundTo(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}
