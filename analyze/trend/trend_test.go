package trend

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
)

// synth is one synthetic series: used(t) for t = 0, step, 2 step, ...
// seconds, plus normal noise of sd noise (bytes), rounded to whole MiB as
// nvidia-smi does.
type synth struct {
	seconds, step float64
	noise         float64
	used          func(t float64) float64
	capacity      float64 // the GPU's used memory can reach this; 0: unknown
	pid           int64   // 0: a GPU series
}

const t0 = 1_796_025_972_000_000 // 2026-11-30 08:06:12 UTC, in µs

// add feeds s as GPU 0 of input name, through a samples batch like the
// parser's, and declares the input's span.
func (s synth) add(t *testing.T, a *Analyzer, name string, seed uint64) {
	t.Helper()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	b := array.NewRecordBuilder(mem, nvml.Schema)
	defer b.Release()
	rng := rand.New(rand.NewPCG(seed, 7))
	var last int64
	for i := 0; float64(i)*s.step <= s.seconds; i++ {
		tt := float64(i) * s.step
		used := math.Round((s.used(tt)+rng.NormFloat64()*s.noise)/mib) * mib
		used = math.Max(used, 0)
		last = t0 + int64(tt*1e6)
		b.Field(nvml.ColTime).(*array.TimestampBuilder).Append(arrow.Timestamp(last))
		b.Field(nvml.ColGPU).(*array.Int32Builder).Append(0)
		b.Field(nvml.ColUUID).(*array.BinaryDictionaryBuilder).AppendString("GPU-synthetic")
		for _, c := range []int{nvml.ColHost, nvml.ColGPUName, nvml.ColPod, nvml.ColNamespace, nvml.ColContainer} {
			b.Field(c).(*array.BinaryDictionaryBuilder).AppendNull()
		}
		b.Field(nvml.ColUsed).(*array.Int64Builder).Append(int64(used))
		conv := string(nvml.ExcludesReserved)
		if s.pid != 0 {
			conv = string(nvml.Process)
			b.Field(nvml.ColPID).(*array.Int64Builder).Append(s.pid)
			b.Field(nvml.ColProcess).(*array.BinaryDictionaryBuilder).AppendString("python3")
		} else {
			b.Field(nvml.ColPID).(*array.Int64Builder).AppendNull()
			b.Field(nvml.ColProcess).(*array.BinaryDictionaryBuilder).AppendNull()
		}
		if s.capacity > 0 && s.pid == 0 {
			b.Field(nvml.ColTotal).(*array.Int64Builder).Append(int64(s.capacity) + 616*mib)
			b.Field(nvml.ColFree).(*array.Int64Builder).Append(int64(s.capacity - used))
			b.Field(nvml.ColReserved).(*array.Int64Builder).Append(616 * mib)
		} else {
			for _, c := range []int{nvml.ColTotal, nvml.ColFree, nvml.ColReserved} {
				b.Field(c).(*array.Int64Builder).AppendNull()
			}
		}
		b.Field(nvml.ColSource).(*array.BinaryDictionaryBuilder).AppendString("synthetic")
		b.Field(nvml.ColConvention).(*array.BinaryDictionaryBuilder).AppendString(conv)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := a.Add(name, rec); err != nil {
		t.Fatal(err)
	}
	a.Input(name, t0, last)
}

func analyzeOne(t *testing.T, s synth, opt Options) SeriesTrend {
	t.Helper()
	a := NewAnalyzer(opt)
	s.add(t, a, "synthetic", 1)
	res := a.Finalize()
	t.Logf("%q %q", res.Series[0].GPUName, res.Series[0].Convention)
	if len(res.Series) != 1 {
		t.Fatalf("%d series", len(res.Series))
	}
	return res.Series[0]
}

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// Steady growth: the Theil–Sen slope within 5% of the true slope, growing,
// and a time to OOM whose range holds the true one: (capacity - the true
// level at the end) / the true slope.
func TestTrendGrowing(t *testing.T) {
	tests := []struct {
		name                 string
		slope, base, noise   float64 // bytes/s, bytes, bytes
		seconds, step, capac float64
	}{
		{"5 MiB/s, noise 20 MiB", 5 * mib, 2 << 30, 20 * mib, 600, 1, 10 << 30},
		{"0.5 MiB/s, noise 2 MiB", 0.5 * mib, 1 << 30, 2 * mib, 1200, 1, 2 << 30},
		{"200 MiB/s every 250 ms, noise 100 MiB", 200 * mib, 1 << 30, 100 * mib, 100, 0.25, 40 << 30},
		{"30 MiB/min, noise 30 MiB, every 10 s for 6 h", 0.5 * mib, 20 << 30, 30 * mib, 6 * 3600, 10, 40 << 30},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := synth{seconds: tt.seconds, step: tt.step, noise: tt.noise, capacity: tt.capac,
				used: func(x float64) float64 { return tt.base + tt.slope*x }}
			a := NewAnalyzer(Options{})
			s.add(t, a, "synthetic", uint64(i))
			got := a.Finalize().Series[0]
			if got.Class != Growing {
				t.Fatalf("class %s, want growing (%+v)", got.Class, got)
			}
			if !within(got.Slope, tt.slope, 0.05) {
				t.Errorf("slope %.4f MiB/s, want %.4f within 5%%", got.Slope/mib, tt.slope/mib)
			}
			if got.SlopeLow > tt.slope || got.SlopeHigh < tt.slope {
				t.Errorf("slope interval [%.4f, %.4f] MiB/s misses %.4f", got.SlopeLow/mib, got.SlopeHigh/mib, tt.slope/mib)
			}
			if got.R2 < 0.9 {
				t.Errorf("R² %.3f", got.R2)
			}
			truth := (tt.capac - (tt.base + tt.slope*tt.seconds)) / tt.slope
			oom := got.TimeToOOM
			if oom == nil {
				t.Fatalf("no time to OOM: %s (truth %.0f s)", got.NoOOMReason, truth)
			}
			if oom.LowSeconds > truth || oom.HighSeconds < truth || !within(oom.Seconds, truth, 0.05) {
				t.Errorf("time to OOM %.0f s [%.0f, %.0f], truth %.0f s", oom.Seconds, oom.LowSeconds, oom.HighSeconds, truth)
			}
		})
	}
}

// A staircase leak: +64 MiB every 30 s, exact whole MiB. The slope is one
// step per period; the time to OOM is within 5% of the headroom at the end
// over it (the staircase's level between steps makes "the end" fuzzy by
// up to one step).
func TestTrendStaircase(t *testing.T) {
	s := synth{seconds: 1800, step: 1, capacity: 16 << 30,
		used: func(x float64) float64 { return 4<<30 + 64*mib*math.Floor(x/30) }}
	got := analyzeOne(t, s, Options{})
	want := 64 * mib / 30.0
	if got.Class != Growing || !within(got.Slope, want, 0.05) {
		t.Fatalf("%s at %.3f MiB/s, want growing at %.3f", got.Class, got.Slope/mib, want/mib)
	}
	truth := float64(16<<30-(4<<30+64*mib*60)) / want
	if got.TimeToOOM == nil || !within(got.TimeToOOM.Seconds, truth, 0.05) {
		t.Errorf("time to OOM %+v (%s), truth %.0f s", got.TimeToOOM, got.NoOOMReason, truth)
	}
}

// Memory that is given back: sawtooth, no time to OOM. A sawtooth whose
// floor keeps rising is a leak under churn: growing, at the floor's rate.
func TestTrendSawtooth(t *testing.T) {
	tooth := func(period, amp float64) func(float64) float64 {
		return func(x float64) float64 { return 1<<30 + amp*math.Mod(x, period)/period }
	}
	for _, s := range []synth{
		{seconds: 1200, step: 1, noise: 10 * mib, capacity: 80 << 30, used: tooth(60, 2<<30)},
		{seconds: 600, step: 1, noise: 2 * mib, capacity: 80 << 30, used: tooth(10, 512*mib)},
		// Bumps: a job that allocates and frees everything, four times.
		{seconds: 400, step: 0.25, capacity: 80 << 30, used: func(x float64) float64 {
			if math.Mod(x, 100) < 60 {
				return 4907 * mib
			}
			return 0
		}},
	} {
		got := analyzeOne(t, s, Options{})
		if got.Class != Sawtooth {
			t.Errorf("class %s, want sawtooth (%d change points)", got.Class, len(got.ChangePoints))
		}
		if got.TimeToOOM != nil || !strings.Contains(got.NoOOMReason, "sawtooth") {
			t.Errorf("time to OOM %+v, reason %q", got.TimeToOOM, got.NoOOMReason)
		}
	}

	// The floor rises 20 MiB per 60 s cycle: 1/3 MiB/s.
	s := synth{seconds: 1800, step: 1, noise: 4 * mib, capacity: 8 << 30, used: func(x float64) float64 {
		return 1<<30 + 20*mib*math.Floor(x/60) + (2<<30)*math.Mod(x, 60)/60
	}}
	got := analyzeOne(t, s, Options{})
	if got.Class != Growing || !got.RisingFloor || !within(got.Slope, 20*mib/60.0, 0.05) {
		t.Errorf("%s (rising floor %v) at %.4f MiB/s, want growing at 0.3333", got.Class, got.RisingFloor, got.Slope/mib)
	}
	if got.TimeToOOM == nil {
		t.Errorf("no time to OOM: %s", got.NoOOMReason)
	}
}

// One-time growth then flat is a step; a level within the noise is flat.
// Neither has a time to OOM.
func TestTrendStepAndFlat(t *testing.T) {
	step := synth{seconds: 400, step: 1, noise: 3 * mib, capacity: 80 << 30, used: func(x float64) float64 {
		switch {
		case x < 100:
			return 1 << 30
		case x < 102:
			return 1<<30 + 2<<30*(x-100)
		}
		return 5 << 30
	}}
	got := analyzeOne(t, step, Options{})
	if got.Class != Step || got.TimeToOOM != nil {
		t.Errorf("step: %s, time to OOM %+v", got.Class, got.TimeToOOM)
	}
	if len(got.ChangePoints) != 1 {
		t.Fatalf("change points %+v", got.ChangePoints)
	}
	cp := got.ChangePoints[0]
	if !within(float64(cp.FromBytes), 1<<30, 0.01) || !within(float64(cp.ToBytes), 5<<30, 0.01) ||
		cp.StartUs < t0+98e6 || cp.EndUs > t0+104e6 {
		t.Errorf("change point %+v", cp)
	}

	for name, s := range map[string]synth{
		"noise":   {seconds: 600, step: 1, noise: 2 * mib, capacity: 80 << 30, used: func(float64) float64 { return 3 << 30 }},
		"exact":   {seconds: 60, step: 0.25, capacity: 80 << 30, used: func(float64) float64 { return 1960 * mib }},
		"20 down": {seconds: 6, step: 0.25, pid: 565, used: func(x float64) float64 { return (3378 - 20*math.Floor(x/5)) * mib }},
	} {
		got := analyzeOne(t, s, Options{})
		if got.Class != Flat || got.TimeToOOM != nil || math.Abs(got.Slope) > 0.1*mib {
			t.Errorf("%s: %s at %.3f MiB/s, time to OOM %+v", name, got.Class, got.Slope/mib, got.TimeToOOM)
		}
	}
}

// A step up (a model loaded) and then a leak: growing, and the trend is
// fitted after the step, so the rate is the leak's.
func TestTrendWarmupThenLeak(t *testing.T) {
	s := synth{seconds: 610, step: 1, noise: 5 * mib, capacity: 20 << 30, used: func(x float64) float64 {
		if x < 10 {
			return 0
		}
		return 10<<30 + 2*mib*(x-10)
	}}
	got := analyzeOne(t, s, Options{})
	if got.Class != Growing || !within(got.Slope, 2*mib, 0.05) {
		t.Fatalf("%s at %.3f MiB/s, want growing at 2", got.Class, got.Slope/mib)
	}
	if got.WindowStartUs < t0+10e6 || got.WindowStartUs > t0+15e6 {
		t.Errorf("trend window starts %.1f s in, want just after the step at 10 s", float64(got.WindowStartUs-t0)/1e6)
	}
	truth := float64(20<<30-(10<<30+2*mib*600)) / (2 * mib)
	if oom := got.TimeToOOM; oom == nil || oom.LowSeconds > truth || oom.HighSeconds < truth {
		t.Errorf("time to OOM %+v (%s), truth %.0f s", got.TimeToOOM, got.NoOOMReason, truth)
	}
}

// A time to OOM only when credible, else the reason.
func TestTrendNotCredible(t *testing.T) {
	ramp := func(x float64) float64 { return 1<<30 + 10*mib*x }
	tests := []struct {
		name   string
		s      synth
		opt    Options
		reason string
	}{
		{"few samples", synth{seconds: 9, step: 1, capacity: 80 << 30, used: ramp}, Options{MinSamples: 20}, "only 10 samples"},
		{"far away", synth{seconds: 60, step: 1, capacity: 800 << 30, used: ramp}, Options{}, "more than 20 times"},
		{"no total", synth{seconds: 60, step: 1, used: ramp}, Options{}, "total memory"},
		{"noise", synth{seconds: 60, step: 1, noise: 400 * mib, capacity: 80 << 30, used: func(x float64) float64 { return 8<<30 + 4*mib*x }},
			Options{}, ""},
	}
	for _, tt := range tests {
		got := analyzeOne(t, tt.s, tt.opt)
		if got.TimeToOOM != nil {
			t.Errorf("%s: time to OOM %+v (%s)", tt.name, got.TimeToOOM, got.Class)
		}
		if !strings.Contains(got.NoOOMReason, tt.reason) || got.NoOOMReason == "" {
			t.Errorf("%s: reason %q, want %q", tt.name, got.NoOOMReason, tt.reason)
		}
	}
	// With the GPU's memory given, the log without totals has one.
	got := analyzeOne(t, synth{seconds: 60, step: 1, used: ramp}, Options{GPUMemoryBytes: 8 << 30})
	if got.TimeToOOM == nil || !within(got.TimeToOOM.Seconds, (7<<30-600*mib)/(10*mib), 0.02) {
		t.Errorf("with GPUMemoryBytes: %+v %s", got.TimeToOOM, got.NoOOMReason)
	}
}

// readNVML feeds a real log to a.
func readNVML(t *testing.T, a *Analyzer, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	rd := nvml.NewReader(f, path, nvml.WithAllocator(mem))
	defer rd.Release()
	for rd.Next() {
		if err := a.Add(path, rd.RecordBatch()); err != nil {
			t.Fatal(err)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	m := rd.Metadata()
	a.Input(path, m.FirstUs, m.LastUs)
	a.ProcessesListed(path, m.ProcessesListedUs) // as pipeline/nvml.go does
	a.ProcessesPartial(path, m.ProcessesPartialUs)
}

func trends(t *testing.T, paths ...string) []SeriesTrend {
	a := NewAnalyzer(Options{})
	for _, p := range paths {
		readNVML(t, a, "../../testdata/nvml/"+p)
	}
	return a.Finalize().Series
}

func byPID(series []SeriesTrend, input string) map[int64]SeriesTrend {
	out := map[int64]SeriesTrend{}
	for _, s := range series {
		if s.HasPID && strings.HasSuffix(s.Input, input) {
			out[s.PID] = s
		}
	}
	return out
}

// query_apps.csv (fixtures README): pid 538 climbs from 802 to 4898 MiB in
// 1.5 s (768 MiB per 250 ms sample) and then stays flat until it exits: a
// step, not growth. Pids 565 and 591 are flat at about 3.3 GiB (3378 MiB,
// then 3358: a 20 MiB release is within 2% of the level).
func TestQueryAppsFixture(t *testing.T) {
	procs := byPID(trends(t, "query_apps.csv"), "query_apps.csv")
	if len(procs) != 7 {
		t.Fatalf("%d processes, want 7", len(procs))
	}
	p := procs[538]
	if p.Class != Step {
		t.Errorf("pid 538: %s, want step", p.Class)
	}
	if len(p.ChangePoints) != 1 {
		t.Fatalf("pid 538 change points %+v", p.ChangePoints)
	}
	cp := p.ChangePoints[0]
	if cp.FromBytes != 802*mib || cp.ToBytes != 4898*mib || d(cp.EndUs-cp.StartUs) < 1.4 || d(cp.EndUs-cp.StartUs) > 1.6 {
		t.Errorf("pid 538: %d -> %d MiB in %.2f s, want 802 -> 4898 in 1.5", cp.FromBytes/mib, cp.ToBytes/mib, d(cp.EndUs-cp.StartUs))
	}
	for _, pid := range []int64{565, 591} {
		if procs[pid].Class != Flat {
			t.Errorf("pid %d: %s, want flat", pid, procs[pid].Class)
		}
	}
	for pid, p := range procs {
		if p.TimeToOOM != nil || p.Class == Growing {
			t.Errorf("pid %d: %s, time to OOM %+v: nothing in this run leaks at the NVML level", pid, p.Class, p.TimeToOOM)
		}
	}
	// Alone, the log ends with pid 646's last row: it held memory to the end.
	if !procs[646].HeldToEnd || procs[538].HeldToEnd {
		t.Errorf("held to end: 646 %v, 538 %v", procs[646].HeldToEnd, procs[538].HeldToEnd)
	}
}

func d(us int64) float64 { return float64(us) / 1e6 }

// With the GPU log of the same run: the GPU's memory is a sawtooth (each
// scenario frees everything at exit), the processes account for all but
// about 9 MiB of it, and no process held memory to the end (the GPU log
// runs on for 2 s at 0 MiB after pid 646 exits).
func TestGPUAndAppsTogether(t *testing.T) {
	all := trends(t, "query_gpu.csv", "query_apps.csv")
	gpu := all[0]
	if gpu.HasPID || gpu.Class != Sawtooth || gpu.PeakBytes != 4907*mib || gpu.CapacityBytes != 143156*mib {
		t.Fatalf("GPU series %+v", gpu)
	}
	u := gpu.Unattributed
	if u == nil || u.MedianBytes < 0 || u.MedianBytes > 16*mib || u.Samples < 100 {
		t.Errorf("unattributed %+v", u)
	}
	for pid, p := range byPID(all, "query_apps.csv") {
		if p.HeldToEnd {
			t.Errorf("pid %d held to the end of the GPU log", pid)
		}
	}
	// pynvml lists the processes in the same records: at the peak, 5521.875
	// MiB used less 615.0625 MiB reserved (644939776 bytes) is 4906.8125 MiB,
	// less pid 538's 4898 MiB leaves 8.8125 MiB.
	py := trends(t, "pynvml.jsonl")[0]
	if py.Unattributed == nil || py.Unattributed.MedianBytes != 9240576 {
		t.Errorf("pynvml unattributed %+v", py.Unattributed)
	}
}

// A growing process with its GPU's totals in another log: the time to OOM
// is the GPU's headroom over the process's rate.
func TestProcessTimeToOOM(t *testing.T) {
	a := NewAnalyzer(Options{})
	synth{seconds: 300, step: 1, capacity: 40 << 30, used: func(x float64) float64 { return 4<<30 + 20*mib*x }}.add(t, a, "gpu.csv", 1)
	synth{seconds: 300, step: 1, pid: 42, used: func(x float64) float64 { return 3<<30 + 20*mib*x }}.add(t, a, "apps.csv", 2)
	res := a.Finalize()
	p := res.Series[1]
	if !p.HasPID || p.Class != Growing {
		t.Fatalf("process %+v", p)
	}
	// Headroom at the end: 40 GiB - (4 GiB + 6000 MiB); 20 MiB/s.
	truth := float64(40<<30-(4<<30+6000*mib)) / (20 * mib)
	if p.TimeToOOM == nil || !within(p.TimeToOOM.Seconds, truth, 0.01) {
		t.Errorf("time to OOM %+v (%s), want %.0f s", p.TimeToOOM, p.NoOOMReason, truth)
	}
}

func TestDuration(t *testing.T) {
	for sec, want := range map[float64]string{45: "45 s", 720: "12 min", 12600: "3.5 h", 3 * 86400: "3.0 days"} {
		if got := Duration(sec); got != want {
			t.Errorf("Duration(%v) = %q, want %q", sec, got, want)
		}
	}
}

// TestBatchText: a series takes the last GPU name and convention its
// rows gave, whether the batch's dictionary holds one value of them
// (taken once per series and batch) or several (taken row by row), and a
// null name leaves the last one.
func TestBatchText(t *testing.T) {
	type row struct{ name, used, free string }
	for _, tc := range []struct {
		what       string
		rows       []row
		name, conv string
	}{
		{"one name, one convention", []row{{"A100", "10", "90"}, {"A100", "11", "89"}, {"A100", "12", "88"}, {"A100", "13", "87"}, {"A100", "14", "86"}},
			"A100", string(nvml.IncludesReservedUnknown)},
		// Batches of a name and a null, of nulls alone; a reservation
		// appears (used + free < total), then goes.
		{"names, nulls, conventions", []row{{"A100", "10", "90"}, {"A100", "11", "89"}, {"H100", "12", "88"}, {"[N/A]", "13", "80"}, {"[N/A]", "14", "86"}, {"[N/A]", "15", "85"}},
			"H100", string(nvml.IncludesReservedUnknown)},
	} {
		log := "timestamp, index, name, memory.total [MiB], memory.used [MiB], memory.free [MiB]\n"
		for k, r := range tc.rows {
			log += fmt.Sprintf("2026/11/30 08:00:%02d.000, 0, %s, 100 MiB, %s MiB, %s MiB\n", k, r.name, r.used, r.free)
		}
		a := NewAnalyzer(Options{})
		rd := nvml.NewReader(strings.NewReader(log), "b.csv", nvml.WithBatchSize(2))
		for rd.Next() {
			if err := a.Add("b.csv", rd.RecordBatch()); err != nil {
				t.Fatal(err)
			}
		}
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		rd.Release()
		a.Input("b.csv", 0, 0)
		res := a.Finalize()
		if len(res.Series) != 1 {
			t.Fatalf("%s: %d series", tc.what, len(res.Series))
		}
		if s := res.Series[0]; s.GPUName != tc.name || s.Convention != tc.conv {
			t.Errorf("%s: GPU name %q, convention %q; want %q, %q", tc.what, s.GPUName, s.Convention, tc.name, tc.conv)
		}
	}
}

// An nvidia-smi table whose pid 571 row has its memory cut ("12339...",
// s31): the GPU row says 134473 MiB used and pid 542 holds 11060 MiB, so
// 123413 MiB is used by no process whose memory is known; pid 571, listed
// with its memory unknown, is named as what may hold it (the OOM message
// of that run gives it 120.51 GiB), not left out as if no process were
// there.
func TestUnattributedNamesUnknownProcesses(t *testing.T) {
	all := trends(t, "s31_nvidia_smi_truncated_proc.txt")
	var gpu *SeriesTrend
	for i := range all {
		if !all[i].HasPID {
			gpu = &all[i]
		}
	}
	if gpu == nil || gpu.Unattributed == nil {
		t.Fatalf("no GPU series with unattributed memory: %+v", all)
	}
	u := gpu.Unattributed
	const want int64 = (134473 - 11060) * mib
	if u.MedianBytes != want || !slices.Equal(u.UnknownPIDs, []int64{571}) {
		t.Errorf("unattributed %+v, want %d bytes and pid 571", u, want)
	}
	// A log whose processes all have their memory: none named.
	for _, s := range trends(t, "query_gpu.csv", "query_apps.csv") {
		if s.Unattributed != nil && len(s.Unattributed.UnknownPIDs) > 0 {
			t.Errorf("%s: unknown pids %v", s.Input, s.Unattributed.UnknownPIDs)
		}
	}
}

// s35's four-GPU table whose process rows show their memory as N/A
// (testdata/nvml/s35_nvidia_smi_na_procs.txt; GPU 0 40123 MiB used with
// pid 12345, GPU 2 60200 MiB with pid 12346, GPU 1 4 MiB and GPU 3 530
// MiB with no row). The N/A processes are listed: GPU 0 and GPU 2 are not
// "none listed", their whole used memory is used by no process whose
// memory is known (an unknown memory counts as nothing in the sum, never
// as 0 bytes of a process: the difference is the GPU's used memory), and
// the pids are named as what may hold it. GPU 3 has none listed, as in
// the same table with the memory shown (multi.txt): its 530 MiB are
// unattributed with NoneListed.
func TestUnattributedNAProcesses(t *testing.T) {
	want := map[int32]struct {
		bytes int64
		pids  []int64
		none  bool
	}{
		0: {40123 * mib, []int64{12345}, false},
		2: {60200 * mib, []int64{12346}, false},
		3: {530 * mib, nil, true},
	}
	seen := 0
	for _, s := range trends(t, "s35_nvidia_smi_na_procs.txt") {
		if s.HasPID {
			t.Errorf("pid %d has a series: its memory is unknown, so it has no samples", s.PID)
			continue
		}
		w, ok := want[s.GPU]
		if !ok {
			continue
		}
		seen++
		u := s.Unattributed
		if u == nil || u.MedianBytes != w.bytes || !slices.Equal(u.UnknownPIDs, w.pids) || u.NoneListed != w.none {
			t.Errorf("GPU %d: unattributed %+v, want %d bytes, pids %v, none listed %v", s.GPU, u, w.bytes, w.pids, w.none)
		}
	}
	if seen != 3 {
		t.Errorf("%d of GPUs 0, 2 and 3 found", seen)
	}
}

// The same fault in the other layouts: a process whose memory a
// --query-compute-apps CSV gives as [N/A] (beside a --query-gpu log that
// names the GPU by UUID), or a pynvml sampler as null, is named on its
// GPU, not dropped. GPU 0 (GPU-aaaa) has 40123 MiB used and only pid
// 12345, memory unknown: all 40123 MiB is used by no process whose memory
// is known. GPU 1 (GPU-bbbb): pid 12346 holds 60188 of its 60200 MiB.
func TestUnattributedUnknownAcrossLayouts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gpu := write("gpu.csv", "timestamp, index, uuid, name, memory.total [MiB], memory.used [MiB], memory.free [MiB]\n"+
		"2026/12/02 10:00:00.000, 0, GPU-aaaa, NVIDIA H100, 81559 MiB, 40123 MiB, 40821 MiB\n"+
		"2026/12/02 10:00:00.000, 1, GPU-bbbb, NVIDIA H100, 81559 MiB, 60200 MiB, 20744 MiB\n"+
		"2026/12/02 10:00:01.000, 0, GPU-aaaa, NVIDIA H100, 81559 MiB, 40123 MiB, 40821 MiB\n"+
		"2026/12/02 10:00:01.000, 1, GPU-bbbb, NVIDIA H100, 81559 MiB, 60200 MiB, 20744 MiB\n")
	apps := write("apps.csv", "timestamp, gpu_uuid, pid, process_name, used_memory [MiB]\n"+
		"2026/12/02 10:00:00.000, GPU-aaaa, 12345, python, [N/A]\n"+
		"2026/12/02 10:00:00.000, GPU-bbbb, 12346, python, 60188 MiB\n"+
		"2026/12/02 10:00:01.000, GPU-aaaa, 12345, python, [N/A]\n"+
		"2026/12/02 10:00:01.000, GPU-bbbb, 12346, python, 60188 MiB\n")
	// pynvml: used 42072014848 B (40123 MiB) with reserved 0, so used_bytes
	// is 40123 MiB as logged.
	pyn := write("p.jsonl", `{"ts": 1764669600, "gpu": 0, "total": 85520809984, "used": 42072014848, "free": 43448795136, "reserved": 0, "processes": [{"pid": 12345, "usedGpuMemory": null}]}`+"\n"+
		`{"ts": 1764669601, "gpu": 0, "total": 85520809984, "used": 42072014848, "free": 43448795136, "reserved": 0, "processes": [{"pid": 12345, "usedGpuMemory": null}]}`+"\n")
	for _, c := range []struct {
		name  string
		paths []string
	}{{"query-gpu + query-apps", []string{gpu, apps}}, {"pynvml", []string{pyn}}} {
		a := NewAnalyzer(Options{})
		for _, p := range c.paths {
			readNVML(t, a, p)
		}
		found := false
		for _, s := range a.Finalize().Series {
			if s.HasPID || s.GPU != 0 {
				continue
			}
			found = true
			u := s.Unattributed
			if u == nil || u.MedianBytes != 40123*mib || !slices.Equal(u.UnknownPIDs, []int64{12345}) || u.NoneListed {
				t.Errorf("%s: GPU 0 unattributed %+v, want 40123 MiB, pid 12345, not none listed", c.name, u)
			}
		}
		if !found {
			t.Errorf("%s: no GPU 0 series", c.name)
		}
	}
}
