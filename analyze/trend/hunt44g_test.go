package trend

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The session-44 tester's logs (testdata/README.md, synthetic): used
// memory rises 5 MiB every 5 s sample (1.0 MiB/s) ±20 MiB for 2 h, and
// every 120th sample from the 60th (10:05:00, 10:15:00, ... 11:55:00: 12
// of them) reads 4096 MiB lower; the next sample is back on the line.
// And 3 MiB/s, one sample a second, for 401 samples, with sample 200
// (10:03:20) reading 0 MiB. Before session 44 the dips made the first
// "step ... in 4 steps" and the one zero the second "sawtooth ... not a
// leak": the leak missed, the gate passed.
func TestHunt44gGlitchesInLeakFiles(t *testing.T) {
	start := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		file     string
		rate     float64 // MiB/s
		setAside int
		first    time.Duration
	}{
		{"h44g_leak_periodic_dips.csv", 1, 12, 5 * time.Minute},
		{"h44g_ramp3_glitch.csv", 3, 1, 200 * time.Second},
	} {
		got := trends(t, c.file)
		if len(got) != 1 {
			t.Fatalf("%s: %d series, want 1", c.file, len(got))
		}
		s := got[0]
		if s.Class != Growing || !within(s.Slope/mib, c.rate, 0.05) {
			t.Errorf("%s: %s at %.2f MiB/s, want growing at %g", c.file, s.Class, s.Slope/mib, c.rate)
		}
		if want := start.Add(c.first).UnixMicro(); s.SetAside != c.setAside || len(s.SetAsideUs) == 0 || s.SetAsideUs[0] != want {
			t.Errorf("%s: %d set aside (at %v), want %d, the first at %d", c.file, s.SetAside, s.SetAsideUs, c.setAside, want)
		}
	}
}

// glitchy is 720 samples 10 s apart (2 h) of level(i) MiB with ±20 MiB of
// uniform jitter from seed, and one sample in every 60 (the 30th, 90th,
// ... 690th: 12 of them) moved by h MiB.
func glitchy(h float64, seed uint64, level func(i int) float64) synth {
	return jittered(720, 20, seed, func(i int) float64 {
		if i%60 == 30 {
			return level(i) + h
		}
		return level(i)
	})
}

// One-sample excursions neither make nor hide growth, whatever the seed:
// a leak of 3 MiB a sample (18 MiB/min, 2.1 GiB over the log, growing
// with no excursions as the first check asserts) with 12 readings 4 GiB
// low, 4 GiB high, or at 0 MiB, is growing at 18 MiB/min within 10%, with
// those 12 set aside; a flat 30 GiB with the same is flat. Before session
// 44 a leak with such dips was a step or a sawtooth, and a flat series
// with them a sawtooth ("4 GiB given back").
func TestHunt44gGlitchesSeeded(t *testing.T) {
	leak := func(i int) float64 { return 30000 + 3*float64(i) }
	flat := func(int) float64 { return 30000 }
	for seed := uint64(1); seed <= 20; seed++ {
		if got := analyzeOne(t, glitchy(0, seed, leak), Options{}); got.Class != Growing || got.SetAside != 0 {
			t.Fatalf("seed %d, no excursions: leak %s with %d set aside, want growing with none", seed, got.Class, got.SetAside)
		}
		for _, h := range []float64{-4096, 4096, -30000} {
			name := fmt.Sprintf("seed %d, excursions of %g MiB", seed, h)
			got := analyzeOne(t, glitchy(h, seed, leak), Options{})
			if got.Class != Growing || !within(got.Slope*60/mib, 18, 0.1) || got.SetAside != 12 {
				t.Errorf("%s: leak %s at %.1f MiB/min, %d set aside; want growing at 18, 12", name, got.Class, got.Slope*60/mib, got.SetAside)
			}
			got = analyzeOne(t, glitchy(h, seed, flat), Options{})
			if got.Class != Flat || got.SetAside != 12 {
				t.Errorf("%s: flat %s, %d set aside; want flat, 12", name, got.Class, got.SetAside)
			}
		}
	}
}

// A sawtooth whose drops last several samples is not glitches: 720
// samples of a ramp from 20000 to 25000 MiB over 54 samples, then 6
// samples back at 20000 (a 60-sample cycle, 12 cycles), ±20 MiB. Every
// sample at the bottom has a neighbour at the bottom, and the top of
// each ramp has one on the ramp: none is out of line alone.
func TestHunt44gSawtoothDropsStay(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		got := analyzeOne(t, jittered(720, 20, seed, func(i int) float64 {
			if k := i % 60; k < 54 {
				return 20000 + 5000*float64(k)/53
			}
			return 20000
		}), Options{})
		if got.Class != Sawtooth || got.SetAside != 0 {
			t.Errorf("seed %d: %s with %d set aside, want sawtooth with none", seed, got.Class, got.SetAside)
		}
	}
}

// What is not an isolated one-sample excursion stays: the first and last
// samples (one neighbour cannot tell a glitch from a release), two low
// readings in a row, and samples that alternate (two devices' samples
// merged, or a pattern of the series' own: more than 1 in 10). A lone
// excursion in the middle is replaced by the mean of its neighbours.
func TestHunt44gSetAsideGlitchesRule(t *testing.T) {
	for _, c := range []struct {
		name string
		y    []float64
		want []int
	}{
		{"first and last", []float64{0, 100, 100, 100, 100, 100, 0}, nil},
		{"two in a row", []float64{100, 100, 100, 0, 0, 100, 100, 100}, nil},
		{"alternating", []float64{0, 100, 0, 100, 0, 100, 0, 100, 0, 100}, nil},
		{"one in the middle", []float64{100, 101, 102, 103, 0, 105, 106, 107, 108, 109, 110}, []int{4}},
	} {
		y := slices.Clone(c.y)
		for i := range y {
			y[i] *= mib
		}
		got := setAsideGlitches(y)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: set aside %v, want %v", c.name, got, c.want)
		}
		for _, i := range got {
			if y[i] != (y[i-1]+y[i+1])/2 {
				t.Errorf("%s: sample %d is %g MiB, want the mean of its neighbours", c.name, i, y[i]/mib)
			}
		}
	}
}

// Two processes each growing 20 MiB/s for 300 s on one GPU of 40 GiB,
// from 3 GiB each, the GPU from 7 GiB at 40 MiB/s (the session-44
// tester's gpu_two.csv + apps_two.csv, shortened). The GPU's headroom at
// the end is 40960 - (7168 + 12000) = 21792 MiB, which the two fill
// together at 40 MiB/s: 544.8 s, for each process as for the GPU. Without
// the GPU's log (--gpu-memory 40GiB), the headroom is 40960 - 2 × (3072 +
// 6000) = 22816 MiB at the two processes' 40 MiB/s added up: 570.4 s.
// Before session 44 each process ran its GPU out at its own 20 MiB/s:
// twice as late (1089.6 s, 1140.8 s).
func TestHunt44gProcessOOMCountsOthersOnItsGPU(t *testing.T) {
	proc := func(pid int64) synth {
		return synth{seconds: 300, step: 1, pid: pid, used: func(x float64) float64 { return 3<<30 + 20*mib*x }}
	}
	for _, c := range []struct {
		name    string
		gpuLog  bool
		seconds float64
		logged  bool
	}{
		{"with the GPU's log", true, 21792.0 / 40, true},
		{"processes alone", false, 22816.0 / 40, false},
	} {
		opt := Options{}
		if !c.gpuLog {
			opt.GPUMemoryBytes = 40 << 30
		}
		a := NewAnalyzer(opt)
		if c.gpuLog {
			synth{seconds: 300, step: 1, capacity: 40 << 30, used: func(x float64) float64 { return 7<<30 + 40*mib*x }}.add(t, a, "gpu.csv", 1)
		}
		proc(41).add(t, a, "apps.csv", 2)
		proc(42).add(t, a, "apps.csv", 3)
		for _, s := range a.Finalize().Series {
			if !s.HasPID {
				// The GPU names the two growing processes logged on it.
				if !slices.Equal(s.GrowingPIDs, []int64{41, 42}) {
					t.Errorf("%s: GPU's growing pids %v, want [41 42]", c.name, s.GrowingPIDs)
				}
				continue
			}
			o := s.TimeToOOM
			if s.Class != Growing || o == nil || !within(o.Seconds, c.seconds, 0.01) || !within(o.GPUSlope, 40*mib, 0.01) || o.GPULogged != c.logged || o.Growers != 2 {
				t.Errorf("%s: pid %d %s, time to OOM %+v (%s); want %.1f s at 40 MiB/s of 2 growers", c.name, s.PID, s.Class, o, s.NoOOMReason, c.seconds)
			}
		}
	}
}

// A leak under a train/eval rhythm (the session-44 tester's
// leak_train_eval.csv): 1440 samples 5 s apart of 30000 + 5·i MiB ±20 (1
// MiB/s), every other 60 samples (5 min of eval) 5000 MiB lower, on a
// GPU whose used memory can reach 80 GiB. The log ends in eval (samples
// 1380 to 1439); the last training sample, 1379, is at 36895 MiB. The
// training peaks reach the capacity first: (81920 - 36895) / 1 = 45025 s,
// 12.5 h. Before session 44 the time was taken from the eval phase's
// level (at most 32195 MiB): 49725 s, 10% late, with "now" the eval
// level alone.
func TestHunt44gRisingFloorOOMFromPeaks(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewPCG(seed, 42))
		u := make([]float64, 1440)
		for i := range u {
			u[i] = (2*rng.Float64() - 1) * 20
		}
		s := synth{seconds: 1439 * 5, step: 5, capacity: 80 << 30, used: func(x float64) float64 {
			i := min(int(x/5+0.5), 1439)
			v := 30000 + 5*float64(i) + u[i]
			if (i/60)%2 == 1 {
				v -= 5000
			}
			return v * mib
		}}
		got := analyzeOne(t, s, Options{})
		if got.Class != Growing || !got.RisingFloor || got.TimeToOOM == nil {
			t.Fatalf("seed %d: %s (rising floor %v), time to OOM %v (%s); want growing, rising floor, a time", seed, got.Class, got.RisingFloor, got.TimeToOOM, got.NoOOMReason)
		}
		if !within(got.TimeToOOM.Seconds, 45025, 0.02) || !within(float64(got.CyclePeakBytes)/mib, 36895, 0.002) {
			t.Errorf("seed %d: time to OOM %.0f s from %.0f MiB, want 45025 s from 36895", seed, got.TimeToOOM.Seconds, float64(got.CyclePeakBytes)/mib)
		}
	}
}

// A ramp at the very end of a long flat log (the session-44 tester's
// flat_then_end_ramp.csv): 720 samples 5 s apart flat at 30000 MiB ±10,
// then ramp samples of +300 MiB each to the end, on a GPU that can reach
// 80 GiB. 9 samples (45 s after an hour: the log is 80 windows long, more
// than the 20 the projection may reach ahead) show memory rising now, not
// a rate that lasts: growing, with no time to OOM, and the reason gives
// the tail's length. Before session 44: "runs out of memory in about 14
// min". 30 samples (more than 3 × 8) are enough for a time:
// (81920 - 39000) / 60 MiB/s = 715 s.
func TestHunt44gShortTailGivesNoOOM(t *testing.T) {
	for _, c := range []struct {
		ramp    int
		seconds float64 // 0: none
	}{{9, 0}, {30, 715}} {
		n := 720 + c.ramp
		rng := rand.New(rand.NewPCG(7, 42))
		u := make([]float64, n)
		for i := range u {
			u[i] = (2*rng.Float64() - 1) * 10
		}
		s := synth{seconds: float64(n-1) * 5, step: 5, capacity: 80 << 30, used: func(x float64) float64 {
			i := min(int(x/5+0.5), n-1)
			v := 30000 + u[i]
			if i >= 720 {
				v = 30000 + 300*float64(i-719)
			}
			return v * mib
		}}
		got := analyzeOne(t, s, Options{})
		if got.Class != Growing {
			t.Fatalf("ramp of %d: %s, want growing", c.ramp, got.Class)
		}
		switch {
		case c.seconds == 0 && (got.TimeToOOM != nil || !strings.Contains(got.NoOOMReason, "covers only the last")):
			t.Errorf("ramp of %d: time to OOM %+v (%.200q); want none, the tail named", c.ramp, got.TimeToOOM, got.NoOOMReason)
		case c.seconds > 0 && (got.TimeToOOM == nil || !within(got.TimeToOOM.Seconds, c.seconds, 0.02)):
			t.Errorf("ramp of %d: time to OOM %+v (%.200q); want %.0f s", c.ramp, got.TimeToOOM, got.NoOOMReason, c.seconds)
		}
	}
}

// Three steps up of 2048 MiB, 600 s apart, from 20000 MiB, one sample a
// second (the session-44 tester's S3_stairs.csv): the log ends 600 s
// after the last step, when the next would be due, so it cannot show
// that the steps stopped: StepTailUs about 600 s, no longer than
// StepSpacingUs (600 s, a few seconds more where binned points straddle a
// step). Before session 44 it read "then flat", as after memory allocated
// once. The same steps with 1200 s after the last (twice the spacing)
// show a level held longer than the steps took to come: no tail noted.
func TestHunt44gStepsTailNoLongerThanSpacing(t *testing.T) {
	for _, c := range []struct {
		n    int
		tail float64 // s; 0: none noted
	}{{2400, 600}, {3000, 0}} {
		got := analyzeOne(t, synth{seconds: float64(c.n - 1), step: 1, used: func(x float64) float64 {
			return (20000 + 2048*math.Min(math.Floor(x/600), 3)) * mib
		}}, Options{})
		if got.Class != Step || len(got.ChangePoints) != 3 {
			t.Fatalf("%d samples: %s with %d changes, want a step in 3", c.n, got.Class, len(got.ChangePoints))
		}
		tail, spacing := float64(got.StepTailUs)/1e6, float64(got.StepSpacingUs)/1e6
		if c.tail == 0 && got.StepTailUs != 0 || c.tail > 0 && (!within(tail, c.tail, 0.02) || !within(spacing, 600, 0.02) || tail > spacing) {
			t.Errorf("%d samples: tail %.0f s, spacing %.0f s; want tail %.0f s (0: none), spacing 600 s", c.n, tail, spacing, c.tail)
		}
	}
}

// A process logged at 45 MiB more than its GPU's used memory (the
// session-44 tester's gpu_fast.csv + apps_offset.csv: logs sampled at
// other instants): the median difference, GPU less processes, is -45 MiB.
// Before session 44 that was the unattributed memory (JSON
// unattributed_bytes -47185920); now no memory is unattributed (0) and
// ProcessesOverBytes says by how much the logs disagree.
func TestHunt44gUnattributedNotNegative(t *testing.T) {
	a := NewAnalyzer(Options{})
	synth{seconds: 300, step: 1, capacity: 40 << 30, used: func(float64) float64 { return 4 << 30 }}.add(t, a, "gpu.csv", 1)
	synth{seconds: 300, step: 1, pid: 42, used: func(float64) float64 { return 4<<30 + 45*mib }}.add(t, a, "apps.csv", 2)
	for _, s := range a.Finalize().Series {
		if s.HasPID {
			continue
		}
		u := s.Unattributed
		if u == nil || u.MedianBytes != 0 || u.EndBytes != 0 || u.ProcessesOverBytes != 45*mib {
			t.Errorf("unattributed %+v; want 0, 0, processes over by 45 MiB", u)
		}
	}
}
