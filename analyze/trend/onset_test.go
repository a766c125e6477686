package trend

import (
	"math"
	"os"
	"strings"
	"testing"
)

// A leak that starts part way through a flat log: flat at 30000 MiB, then
// rate bytes/s from onset (s) until the last sample, every 180 s for
// 120 samples (the tester's layout, testdata/gen/nvml_hunt/gen_late.py, with
// normal noise of 1 MiB instead of ±2 MiB). Truth: growing at rate; the
// window starts at the onset (within two samples: the kink's sample lies
// on both the level and the line); the time to OOM is (capacity - the
// level at the last sample) / rate, inside the reported range.
func TestTrendLateOnset(t *testing.T) {
	const step, n, capacity = 180.0, 120, 80 << 30
	for _, c := range []struct {
		name      string
		fromIndex int     // the first sample of the growth
		perSample float64 // MiB per sample
	}{
		{"last 10%: 150 MiB/min", 108, 450},
		{"last 15%: 100 MiB/min", 102, 300},
		{"last 25%: 40 MiB/min", 90, 120},
		{"last 50%: 40 MiB/min", 60, 120},
	} {
		t.Run(c.name, func(t *testing.T) {
			onsetS := float64(c.fromIndex) * step
			rate := c.perSample * mib / step
			used := func(x float64) float64 { return 30000*mib + rate*max(0, x-onsetS) }
			got := analyzeOne(t, synth{seconds: (n - 1) * step, step: step, noise: 1 * mib, capacity: capacity, used: used}, Options{})
			if got.Class != Growing || !within(got.Slope, rate, 0.02) {
				t.Fatalf("%s at %.2f MiB/min, want growing at %.2f", got.Class, got.Slope*60/mib, rate*60/mib)
			}
			if w := d(got.WindowStartUs - t0); w < onsetS-2*step || w > onsetS+2*step {
				t.Errorf("window starts %.0f s in, want the onset at %.0f s", w, onsetS)
			}
			truth := (capacity - used((n-1)*step)) / rate
			if o := got.TimeToOOM; o == nil || o.LowSeconds > truth*1.01 || o.HighSeconds < truth*0.99 {
				t.Errorf("time to OOM %+v (%s), truth %.0f s", got.TimeToOOM, got.NoOOMReason, truth)
			}
		})
	}
}

// Steady growth small against the level is growth: 100 MiB/min on 30 GiB
// (6 samples a minute apart, every one higher), 2 MiB/min on 20 GiB with
// noise of 5 MiB for 2 h (240 MiB in all, 1.2% of the level). The rates
// are known; only 6 samples give no time to OOM (8 needed).
func TestTrendSteadySmallRise(t *testing.T) {
	for _, c := range []struct {
		name string
		s    synth
		rate float64
		tol  float64
	}{
		{"6 samples, +100 MiB each", synth{seconds: 300, step: 60, capacity: 40 << 30,
			used: func(x float64) float64 { return 30012*mib + 100*mib*x/60 }}, 100 * mib / 60.0, 0.01},
		{"2 MiB/min at 20 GiB, noise 5 MiB", synth{seconds: 7140, step: 60, noise: 5 * mib, capacity: 80 << 30,
			used: func(x float64) float64 { return 20<<30 + 2*mib*x/60 }}, 2 * mib / 60.0, 0.1},
	} {
		got := analyzeOne(t, c.s, Options{})
		if got.Class != Growing || !within(got.Slope, c.rate, c.tol) {
			t.Errorf("%s: %s at %.2f MiB/min, want growing at %.2f", c.name, got.Class, got.Slope*60/mib, c.rate*60/mib)
		}
	}
}

// Noise, bumps and one-time changes on big jobs stay out of growing,
// whatever the seed. None of these series rises to its end: jitter of 30
// MiB about 60 GiB; the same with one +200 MiB bump of 3 samples in the
// middle, given back; a +100 MiB workspace allocated once at 30%; a ramp
// of 400 MiB over the first 60% that then stops (growth that stopped is a
// step); a warm-up (0 to 20 GiB in 3 samples) then flat; a sawtooth (+6
// GiB for 4 of every 20 min) on a floor that stays put.
func TestTrendNoFalseGrowth(t *testing.T) {
	const step = 60.0
	cases := map[string]func(x float64) float64{
		"jitter": func(float64) float64 { return 60 << 30 },
		"bump given back": func(x float64) float64 {
			if x >= 3600 && x < 3600+3*step {
				return 60<<30 + 200*mib
			}
			return 60 << 30
		},
		"workspace once": func(x float64) float64 {
			if x >= 0.3*7200 {
				return 30<<30 + 100*mib
			}
			return 30 << 30
		},
		"ramp that stopped": func(x float64) float64 { return 30<<30 + 400*mib*min(x, 0.6*7200)/(0.6*7200) },
		"warm-up then flat": func(x float64) float64 {
			if x < 3*step {
				return 20 << 30 * x / (3 * step)
			}
			return 20 << 30
		},
		"sawtooth, flat floor": func(x float64) float64 {
			if m := math.Mod(x, 1200); m >= 900 && m < 1140 {
				return 30<<30 + 6<<30
			}
			return 30 << 30
		},
	}
	for name, used := range cases {
		for seed := range uint64(20) {
			noise := 2.0 * mib
			if name == "jitter" {
				noise = 30 * mib
			}
			a := NewAnalyzer(Options{})
			synth{seconds: 7200, step: step, noise: noise, capacity: 80 << 30, used: used}.add(t, a, "synthetic", seed)
			if got := a.Finalize().Series[0]; got.Class == Growing {
				t.Errorf("%s, seed %d: growing at %.2f MiB/min from %.0f s (R² %.2f)", name, seed, got.Slope*60/mib, d(got.WindowStartUs-t0), got.R2)
			}
		}
	}
}

// A sawtooth whose floor rises in every cycle is a leak even when the
// floor's rise (50 MiB a cycle, 550 MiB in all) is under a tenth of the
// spike (6 GiB): growing, with a rising floor, at 50 MiB per 20 min,
// fitted over every cycle (the window starts with the series).
func TestTrendSawtoothFloorRisesEveryCycle(t *testing.T) {
	used := func(x float64) float64 {
		v := 30000*mib + 50*mib*math.Floor(x/1200)
		if m := math.Mod(x, 1200); m >= 900 && m < 1140 {
			v += 6 << 30
		}
		return v
	}
	got := analyzeOne(t, synth{seconds: 4*3600 - 60, step: 60, noise: 1 * mib, capacity: 80 << 30, used: used}, Options{})
	if got.Class != Growing || !got.RisingFloor || !within(got.Slope, 50*mib/1200.0, 0.1) {
		t.Fatalf("%s (rising floor %v) at %.2f MiB/min, want growing at 2.5", got.Class, got.RisingFloor, got.Slope*60/mib)
	}
	if got.WindowStartUs != t0 {
		t.Errorf("window starts %.0f s in, want the first cycle", d(got.WindowStartUs-t0))
	}
}

// A step in the last two samples has nothing after it: StepAtEnd, and no
// "then no growth" reason; the same step with 20 samples after it is a
// plain step.
func TestStepAtEnd(t *testing.T) {
	for _, c := range []struct {
		at    float64
		atEnd bool
	}{{58 * 60, true}, {40 * 60, false}} {
		used := func(x float64) float64 {
			if x >= c.at {
				return 20<<30 + 2<<30
			}
			return 20 << 30
		}
		got := analyzeOne(t, synth{seconds: 59 * 60, step: 60, noise: 1 * mib, capacity: 80 << 30, used: used}, Options{})
		if got.Class != Step || got.StepAtEnd != c.atEnd {
			t.Errorf("step at %.0f s: %s, at end %v; want step, %v", c.at, got.Class, got.StepAtEnd, c.atEnd)
		}
		if c.atEnd && strings.Contains(got.NoOOMReason, "no growth") {
			t.Errorf("step at the end: reason %q claims no growth", got.NoOOMReason)
		}
	}
}

// The real logs of the fixtures and of testdata/nvml whose processes
// load, run and exit without leaking (testdata/README.md, the fixtures'
// README: steps, flat processes, the GPU's sawtooth as scenarios come and
// go) have no growing series.
func TestRealLogsNoFalseGrowth(t *testing.T) {
	for _, p := range []string{
		"query_gpu.csv", "query_apps.csv", "query_apps_noheader.csv", "query_gpu_noheader_nounits.csv",
		"query_gpu_reordered.csv", "pynvml.jsonl", "pynvml_2.jsonl", "dmon.txt", "dmon_mu.txt", "pmon.txt", "pmon_mu_T.txt",
		"../../../shared/fixtures/nvml/query_gpu.csv", "../../../shared/fixtures/nvml/query_apps.csv",
		"../../../shared/fixtures/nvml/pynvml.jsonl", "../../../shared/fixtures/nvml/dmon.txt", "../../../shared/fixtures/nvml/pmon.txt",
	} {
		if _, err := os.Stat("../../testdata/nvml/" + p); err != nil && strings.Contains(p, "shared/fixtures") {
			t.Logf("%s is absent (../shared is not beside this checkout): not checked", p)
			continue
		}
		for _, s := range trends(t, p) {
			if s.Class == Growing {
				t.Errorf("%s: GPU %d pid %d growing at %.1f MiB/s", p, s.GPU, s.PID, s.Slope/mib)
			}
		}
	}
}

// onset: a level then a line finds the kink; a line alone, or a level
// alone, keeps the window's start.
func TestOnset(t *testing.T) {
	x := make([]float64, 40)
	kink, line, flat := make([]float64, 40), make([]float64, 40), make([]float64, 40)
	for i := range x {
		x[i] = float64(i)
		kink[i] = 100 + 10*max(0, float64(i-25))
		line[i] = 100 + 10*float64(i)
		flat[i] = 100
	}
	pen := 3 * 0.25 * math.Log(40)
	if k := onset(x, kink, 0, pen); k < 25 || k > 26 {
		t.Errorf("kink at 25: onset %d", k)
	}
	if k := onset(x, line, 0, pen); k != 0 {
		t.Errorf("line: onset %d, want 0", k)
	}
	if k := onset(x, flat, 3, pen); k != 3 {
		t.Errorf("flat from 3: onset %d, want 3", k)
	}
}

// s37's F10: used memory above the GPU's capacity (a unit mix-up, a
// total that is not this GPU's) cannot be; a series growing past it got
// "runs out of memory in about 0 s". 40000 MiB rising 1000 MiB a minute
// for 19 minutes on a GPU of 32768 MiB: growing, but no time to OOM, and
// the reason says the figures are wrong; its samples, all above the GPU's
// total (capacity + 616 MiB), are now left out, so it is no series at all
// (TestUsedAboveTotal). The same growth below capacity
// (10000 MiB + 1000 MiB/min up to 29000 of 32768) keeps its time to OOM:
// (32768 - 29000) MiB / 1000 MiB/min = 3.8 min.
func TestUsedAboveCapacityNoTimeToOOM(t *testing.T) {
	for _, c := range []struct {
		from, rate float64 // MiB, MiB/min
		above      bool
		reason     string
	}{
		{40000 * mib, 1000 * mib, true, "above the GPU's total"},
		{10000 * mib, 1000 * mib, false, ""},
		// Above the capacity, not the total (synth's is capacity + 616
		// MiB reserved): 32300 + 50 x 19 = 33250 MiB at the end, 482
		// MiB above capacity (more than 1% of the level), 134 below the
		// total, so no sample is above it.
		{32300 * mib, 50 * mib, true, "above the GPU's capacity"},
	} {
		used := func(x float64) float64 { return c.from + x/60*c.rate }
		sy := synth{seconds: 19 * 60, step: 60, noise: 0, capacity: 32768 * mib, used: used}
		if c.from > 32768*mib+616*mib {
			a := NewAnalyzer(Options{})
			sy.add(t, a, "synthetic", 1)
			if res := a.Finalize(); len(res.Series) != 0 || res.AboveTotal["synthetic"] != 20 {
				t.Errorf("from %.0f MiB: %d series, %d samples left out; want none and all 20", c.from/mib, len(res.Series), res.AboveTotal["synthetic"])
			}
			continue
		}
		got := analyzeOne(t, sy, Options{})
		if got.Class != Growing {
			t.Fatalf("from %.0f MiB: %s, want growing", c.from/mib, got.Class)
		}
		switch {
		// Above the total in every sample: overTotalWarning's reason
		// comes first (TestUsedAboveTotal); above the capacity only
		// (total less reserved), timeToOOM's.
		case c.above && (got.TimeToOOM != nil || !strings.Contains(got.NoOOMReason, c.reason)):
			t.Errorf("above capacity: time to OOM %+v, reason %q", got.TimeToOOM, got.NoOOMReason)
		case !c.above && (got.TimeToOOM == nil || !within(got.TimeToOOM.Seconds, 3768.0/1000*60, 0.05)):
			t.Errorf("below capacity: time to OOM %+v (%q), want about 226 s", got.TimeToOOM, got.NoOOMReason)
		}
	}
}
