package trend

import (
	"fmt"
	"math"
	"testing"
)

// The session-43 tester's logs (testdata/README.md): used memory rises 2
// MiB a minute for 2 h (8 MiB every 5 min in the stair), every step up,
// with a spike of 20 to 100 MiB (30 s, or one sample in the stair) on top
// every 5 min (every 100 s in the stair). The floor rises 240 MiB (184 in
// the stair), far more than 16 MiB and 3σ, and never falls: growing at
// 240 MiB / 7190 s = 2.0 MiB/min (184 MiB / 7190 s = 1.5 MiB/min; the
// stair's Theil–Sen slope is that of its 8 MiB steps every 300 s, 1.6
// MiB/min). Before session 43 the spikes' falls were taken for memory
// given back and every one but the 1 GiB spikes' (a rising-floor
// sawtooth) and the spike-free log was "flat: no growth".
func TestHunt43SpikesOnSteadyLeak(t *testing.T) {
	for _, c := range []struct {
		file string
		rate float64 // MiB/min
	}{
		{"s43_n02_slow_leak.csv", 2},
		{"s43_n02b_spike100.csv", 2},
		{"s43_n11_leak_with_20MiB_transients.csv", 2},
		{"s43_n08_stair_leak_with_transients.csv", 1.6},
		{"s43_n02a_nospike.csv", 2},
		{"s43_n02c_spike1g.csv", 2},
	} {
		got := trends(t, c.file)
		if len(got) != 1 {
			t.Fatalf("%s: %d series", c.file, len(got))
		}
		s := got[0]
		if s.Class != Growing || s.SlopeLow <= 0 || !within(s.Slope*60/mib, c.rate, 0.05) {
			t.Errorf("%s: %s at %.2f MiB/min (95%% from %.2f); want growing at %.1f",
				c.file, s.Class, s.Slope*60/mib, s.SlopeLow*60/mib, c.rate)
		}
		// The leak grows from the first sample: the trend is fitted from
		// there, not from where it left the baseline's band after the
		// first spikes (10:09, 10:15), which were split off as "runs".
		if !s.RisingFloor && s.WindowStartUs != s.StartUs {
			t.Errorf("%s: window from %.0f s in, want the first sample", c.file, d(s.WindowStartUs-s.StartUs))
		}
	}
}

// spiky is 720 samples 10 s apart (2 h) of level(i) MiB plus a spike of
// h MiB for 3 samples in every 30 (5 min), starting at sample phase, with
// ±2 MiB of uniform jitter from seed.
func spiky(h float64, phase int, seed uint64, level func(i int) float64) synth {
	return jittered(720, 2, seed, func(i int) float64 {
		v := level(i)
		if (i+30-phase)%30 < 3 {
			v += h
		}
		return v
	})
}

// Spikes on a steady leak of 2 MiB/min are growing whatever their height
// below the sawtooth's (a drop of a quarter of the range), their phase
// and the jitter; the same spikes on a level that does not move, or on a
// ramp of 400 MiB that stops at 60% of the log, are not.
func TestHunt43SpikesSeeded(t *testing.T) {
	for _, h := range []float64{20, 50, 100} {
		for seed := uint64(1); seed <= 10; seed++ {
			phase := int(seed*7) % 30
			name := fmt.Sprintf("%gMiB/seed%d", h, seed)
			got := analyzeOne(t, spiky(h, phase, seed, func(i int) float64 { return 20480 + float64(i)/3 }), Options{})
			if got.Class != Growing || !within(got.Slope*60/mib, 2, 0.1) {
				t.Errorf("leak %s: %s at %.2f MiB/min, want growing at 2", name, got.Class, got.Slope*60/mib)
			}
			got = analyzeOne(t, spiky(h, phase, seed, func(int) float64 { return 20480 }), Options{})
			if got.Class == Growing {
				t.Errorf("flat %s: growing at %.2f MiB/min", name, got.Slope*60/mib)
			}
			got = analyzeOne(t, spiky(h, phase, seed, func(i int) float64 { return 20480 + 400*float64(min(i, 432))/432 }), Options{})
			if got.Class == Growing {
				t.Errorf("stopped %s: growing at %.2f MiB/min", name, got.Slope*60/mib)
			}
		}
	}
}

// The session-43 tester's crash loop (testdata/README.md): 4 cycles on an
// A100 of 40960 MiB, each 500 MiB (a CUDA context), 5500, 10240 MiB (a
// model loaded), then +240 MiB a sample (24 MiB/s) to 40000 MiB (97.7% of
// the total), then 0 MiB for 3 samples: the process gone, a new one
// started. Each run grows steadily until the GPU is full, and memory falls
// to nothing, not to a load the process keeps: a leak that runs out of
// memory and restarts, growing with 4 OOM exits, released at the last
// run's end (no time to OOM). Before session 43 the 4 repeated runs were
// "sawtooth ... allocation churn, not a leak"; with 2 cycles (n09b) the
// last run was already growing, and is now told as the same crash loop.
func TestHunt43CrashLoop(t *testing.T) {
	for _, c := range []struct {
		file  string
		exits int
	}{
		{"s43_n09_leak_oom_restart_cycles.csv", 4},
		{"s43_n09b_two_cycles.csv", 2},
	} {
		got := trends(t, c.file)
		if len(got) != 1 {
			t.Fatalf("%s: %d series", c.file, len(got))
		}
		s := got[0]
		if s.Class != Growing || s.OOMExits != c.exits || s.ReleasedUs == 0 || s.TimeToOOM != nil || s.BaselineBytes != 0 {
			t.Errorf("%s: %s, %d OOM exits, released at %d, time to OOM %v, baseline %d; want growing, %d, released, none, 0",
				c.file, s.Class, s.OOMExits, s.ReleasedUs, s.TimeToOOM, s.BaselineBytes, c.exits)
		}
		if !within(s.Slope, 24*mib, 0.02) || s.RunPeakBytes != 40000*mib {
			t.Errorf("%s: slope %.1f MiB/s, run peak %d; want 24, 40000 MiB", c.file, s.Slope/mib, s.RunPeakBytes)
		}
		for i, r := range s.Runs {
			if !r.OOMExit {
				t.Errorf("%s: run %d (%s, peak %d) not an OOM exit", c.file, i, r.Class, r.PeakBytes)
			}
		}
	}
	// The same run's processes (--query-compute-apps): a pid each run, each
	// growing (as before).
	procs := byPID(trends(t, "s43_n10_apps_leak_restart.csv"), "s43_n10_apps_leak_restart.csv")
	for pid := int64(4000); pid <= 4003; pid++ {
		if p, ok := procs[pid]; !ok || p.Class != Growing {
			t.Errorf("pid %d: %+v, want growing", pid, p.Class)
		}
	}
	// Churn stays churn: the tester's sawtooth (12000 MiB of 40960, +4096
	// MiB for 1 min in every 5) and the fixtures' GPU (7 processes one after another,
	// peak 4907 MiB of an H200's 143 GiB, back to 0).
	for _, f := range []string{"s43_n03_sawtooth.csv", "query_gpu.csv"} {
		if s := trends(t, f)[0]; s.Class != Sawtooth || s.OOMExits != 0 {
			t.Errorf("%s: %s with %d OOM exits, want sawtooth, none", f, s.Class, s.OOMExits)
		}
	}
}

// cycles is a GPU of 40 GiB (capacity) sampled every 10 s for 90 min:
// from floor MiB, a process loads 10 GiB above it and then grows 24 MiB/s
// up to peak MiB, falls back to floor for 3 samples, and starts again;
// normal noise of 2 MiB from seed.
func cycles(floor, peak float64) synth {
	ramp := (peak - floor - 10240) / 24 // s
	period := 20 + ramp + 30
	return synth{seconds: 5400, step: 10, noise: 2 * mib, capacity: 40 << 30, used: func(x float64) float64 {
		p := math.Mod(x, period)
		switch {
		case p < 10:
			return (floor + 500) * mib
		case p < 20:
			return (floor + 10240) * mib
		case p < 20+ramp:
			return (floor + 10240 + 24*(p-20)) * mib
		}
		return floor * mib
	}}
}

// Cycles that grow until the GPU is full and fall to nothing are a crash
// loop, whatever the seed: growing, every run that ended an OOM exit.
// Cycles to 60% of the GPU (peak far below the total), and cycles to 98%
// that fall back to a load of 12 GiB the process keeps (not to nothing),
// are churn as before: not growing, no OOM exits.
func TestHunt43CrashLoopSeeded(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		for _, c := range []struct {
			name        string
			floor, peak float64
			crash       bool
		}{
			{"full, to 0", 0, 40000, true},
			{"60%, to 0", 0, 24576, false},
			{"full, to 12 GiB", 12288, 40000, false},
		} {
			a := NewAnalyzer(Options{})
			cycles(c.floor, c.peak).add(t, a, "synthetic", seed)
			s := a.Finalize().Series[0]
			ended := 0
			for _, r := range s.Runs {
				if r.ReleasedUs != 0 {
					ended++
				}
			}
			switch {
			case c.crash && (s.Class != Growing || s.OOMExits < 3 || s.OOMExits != ended):
				t.Errorf("%s, seed %d: %s, %d OOM exits of %d runs ended; want growing, all", c.name, seed, s.Class, s.OOMExits, ended)
			case !c.crash && (s.Class == Growing || s.OOMExits != 0):
				t.Errorf("%s, seed %d: %s, %d OOM exits; want churn", c.name, seed, s.Class, s.OOMExits)
			}
		}
	}
}
