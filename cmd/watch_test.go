package cmd

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Not on a terminal, watch prints one line per interval; the leaking
// process is marked growing, and the textfile holds its gauges: growing 1,
// a slope of 128 MiB/s +- 10%, the GPU's capacity.
func TestWatchLinesAndTextfile(t *testing.T) {
	prom := filepath.Join(t.TempDir(), "gpuleak.prom")
	var out, errOut lockedBuffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	c := NewCmdWatch(ios, "test", func(o *WatchOptions) error {
		o.Open = fakeOpen
		o.Notify = func(chan<- os.Signal) func() { return func() {} }
		return runWatch(o)
	})
	c.SetArgs([]string{"--interval", "50ms", "--duration", "1s", "--window", "1m", "--textfile", prom})
	c.SilenceErrors, c.SilenceUsage = true, true
	if err := c.Execute(); err != nil {
		t.Fatalf("%v; stderr %s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// 1 s at 50 ms: about 20 lines, never more than one per interval; a
	// loaded machine drops ticks (4 seen with other builds running), and
	// watch spaces out refreshes whose trend takes long, so only "more than
	// one" is asked at the low end.
	if len(lines) < 2 || len(lines) > 21 {
		t.Fatalf("%d lines, want one per interval:\n%s", len(lines), out.String())
	}
	pid := os.Getpid()
	last := lines[len(lines)-1]
	if !strings.Contains(last, fmt.Sprintf("pid %d python3", pid)) || !strings.Contains(last, "growing") {
		t.Errorf("last line %q does not show pid %d growing", last, pid)
	}
	b, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(name, pidLabel string) (float64, bool) {
		re := regexp.MustCompile(`(?m)^` + name + `\{[^}]*pid="` + pidLabel + `"[^}]*\} (\S+)$`)
		m := re.FindStringSubmatch(string(b))
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(m[1], 64)
		return v, err == nil
	}
	p := strconv.Itoa(pid)
	if v, ok := gauge("gpuleak_memory_growing", p); !ok || v != 1 {
		t.Errorf("gpuleak_memory_growing for pid %s = %v (%v), want 1\n%s", p, v, ok, b)
	}
	if v, ok := gauge("gpuleak_memory_slope_bytes_per_second", p); !ok || math.Abs(v/testMiB-128) > 12.8 {
		t.Errorf("slope for pid %s = %.1f MiB/s, want 128 +- 10%%", p, v/testMiB)
	}
	if v, ok := gauge("gpuleak_memory_growing", "1"); !ok || v != 0 {
		t.Errorf("pid 1 (flat) growing = %v (%v), want 0", v, ok)
	}
	// 140 GiB free at 128 MiB/s is ~18 min away, beyond 20 times the ~10 s
	// trend (the fake's samples are 0.5 s apart): no credible time to OOM,
	// so no gauge.
	if _, ok := gauge("gpuleak_time_to_oom_seconds", ""); ok {
		t.Errorf("a time to OOM extrapolated from ~10 s of samples:\n%s", b)
	}
	if v, ok := gauge("gpuleak_memory_capacity_bytes", ""); !ok || v != 150754820096-644939776 {
		t.Errorf("GPU capacity %v (%v), want total less reserved", v, ok)
	}
}

func TestPrometheusAddr(t *testing.T) {
	for in, want := range map[string]string{
		"": "", ":9400": "127.0.0.1:9400", "9400": "127.0.0.1:9400",
		"0.0.0.0:9400": "0.0.0.0:9400", "[::1]:9400": "[::1]:9400",
	} {
		if got := prometheusAddr(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
