package sizes

import (
	"fmt"
	"testing"
)

// humanize's IBytes: one decimal under 10 of a unit, none above (the
// report's IBytes); FormatSize: two decimals (PyTorch's format_size).
func oneDecimal(n int64) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/(1<<30), "GiB"
	if n < 1<<30 {
		v, u = float64(n)/(1<<20), "MiB"
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, u)
	}
	return fmt.Sprintf("%.0f %s", v, u)
}

func twoDecimals(n int64) string { return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30)) }

func TestOf(t *testing.T) {
	for _, c := range []struct {
		part, whole int64
		format      func(int64) string
		p, w        string
	}{
		// gnome-shell-system-monitor-applet#356's nvidia-smi -q: 1934 of
		// 1995 MiB. One decimal prints both as 1.9 GiB; two decimals:
		// 1934/1024 = 1.8887 -> 1.89, 1995/1024 = 1.9482 -> 1.95.
		{1934 << 20, 1995 << 20, oneDecimal, "1.89 GiB", "1.95 GiB"},
		// wencolani/CrossE#2's table: 12799 of 16280 MiB print apart
		// (12 GiB, 16 GiB): as they are.
		{12799 << 20, 16280 << 20, oneDecimal, "12 GiB", "16 GiB"},
		// Equal sizes are left alone.
		{1995 << 20, 1995 << 20, oneDecimal, "1.9 GiB", "1.9 GiB"},
		// 12.2 and 12.4 GiB both print "12 GiB" with no decimals: one
		// decimal tells them apart (12.2 GiB = 12*2^30 + 0.2*2^30 bytes,
		// 0.2*2^30 = 214748365 rounded).
		{12<<30 + 214748365, 12<<30 + 429496730, oneDecimal, "12.2 GiB", "12.4 GiB"},
		// Two decimals alike (7.50 GiB): 7.498 and 7.502 GiB
		// (7.498*2^30 and 7.502*2^30 bytes, rounded down) need three.
		{8050769002, 8055064043, twoDecimals, "7.498 GiB", "7.502 GiB"},
		// A byte apart in GiB: six decimals do not tell them apart, so
		// bytes do.
		{1 << 30, 1<<30 + 1, twoDecimals, "1073741824 bytes", "1073741825 bytes"},
	} {
		p, w := Of(c.part, c.whole, c.format)
		if p != c.p || w != c.w {
			t.Errorf("Of(%d, %d) = %q, %q; want %q, %q", c.part, c.whole, p, w, c.p, c.w)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		part, whole int64
		want        string
	}{
		{1934, 1995, "97%"},   // 96.94
		{1994, 1995, "99.9%"}, // 99.95 rounds to 100 with no decimals, 99.9 with one (99.949...)
		{1995, 1995, "100%"},
		{1, 1995, "0.1%"}, // 0.0501: "0%" with no decimals, 0.1 with one
		{0, 1995, "0%"},
	} {
		if got := Percent(c.part, c.whole); got != c.want {
			t.Errorf("Percent(%d, %d) = %q, want %q", c.part, c.whole, got, c.want)
		}
	}
}

// Like takes the unit and decimals of a size Of rendered; a size in no
// IEC unit leaves n to format.
func TestLike(t *testing.T) {
	for _, c := range []struct {
		n    int64
		like string
		want string
	}{
		{20 << 30, "20.5 GiB", "20.0 GiB"},
		{21000 << 20, "20.50 GiB", "20.51 GiB"},
		{768 << 20, "20 GiB", "1 GiB"},
		{5 << 20, "123 bytes", "5.0 MiB"},
	} {
		if got := Like(c.n, c.like, oneDecimal); got != c.want {
			t.Errorf("Like(%d, %q) = %q, want %q", c.n, c.like, got, c.want)
		}
	}
}
