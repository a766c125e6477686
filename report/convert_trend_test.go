package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/trend"
)

const mib = 1 << 20

func growingGPU() trend.SeriesTrend {
	return trend.SeriesTrend{
		Input: "gpu.csv", Source: "nvidia-smi-query-gpu", GPU: 0, HasGPU: true, GPUName: "NVIDIA A100",
		Samples: 600, StartUs: 1_796_032_800_000_000, EndUs: 1_796_033_399_000_000, LastBytes: 5 << 30, PeakBytes: 5 << 30,
		Class: trend.Growing, WindowStartUs: 1_796_032_800_000_000, WindowEndUs: 1_796_033_399_000_000, WindowSamples: 600,
		Slope: 5 * mib, SlopeLow: 4.9 * mib, SlopeHigh: 5.1 * mib, OLSSlope: 5 * mib, R2: 0.99, CapacityBytes: 10 << 30,
		TimeToOOM:    &trend.OOMEstimate{Seconds: 1024, LowSeconds: 1000, HighSeconds: 1050, HeadroomBytes: 5 << 30},
		Unattributed: &trend.Unattributed{MedianBytes: 2 << 30, EndBytes: 2 << 30, Samples: 600},
		Profile:      []int64{0, 1 << 30, 5 << 30},
	}
}

func TestFromTrends(t *testing.T) {
	proc := trend.SeriesTrend{
		Input: "apps.csv", Source: "nvidia-smi-query-apps", UUID: "GPU-3719ad94-3253-f714-5b1b-1cda70808b76", PID: 538, HasPID: true, Process: "python3",
		Samples: 33, StartUs: 1e15, EndUs: 1e15 + 8e6, FirstBytes: 802 * mib, LastBytes: 4898 * mib, PeakBytes: 4898 * mib, Class: trend.Step,
		ChangePoints: []trend.ChangePoint{{StartUs: 1e15, EndUs: 1e15 + 1.5e6, FromBytes: 802 * mib, ToBytes: 4898 * mib}},
		NoOOMReason:  "a one-time step, then no growth", HeldToEnd: true,
	}
	ins, fs := FromTrends([]TrendInput{
		{Path: "gpu.csv", Format: "nvidia-smi-query-gpu", Samples: 600, StartUs: 1, EndUs: 2, Clock: "absolute"},
		{Path: "apps.csv", Format: "nvidia-smi-query-apps", Samples: 33, StartUs: 1, EndUs: 2, Clock: "absolute", Warnings: []string{"w"}},
	}, &trend.Result{Series: []trend.SeriesTrend{growingGPU(), proc}})
	if len(ins) != 2 || *ins[0].Samples != 600 || ins[1].Warnings[0] != "w" || len(fs) != 2 {
		t.Fatalf("inputs %+v, %d findings", ins, len(fs))
	}
	g, p := fs[0], fs[1]
	if g.Kind != KindTrend || *g.GPU != 0 || g.PID != nil || g.HeldToEnd != nil || *g.TimeToOOMS != 1024 || g.TimeToOOMReason != "" ||
		g.Bytes != 5<<30 || len(g.ProfileBytes) != 3 || *g.UnattributedBytes != 2<<30 || *g.CapacityBytes != 10<<30 {
		t.Errorf("GPU finding %+v", g)
	}
	for _, want := range []string{"growing: GPU 0 (NVIDIA A100)", "5.0 MiB/s", "R² 0.99", "runs out of memory in about 17 min", "2.0 GiB of it is used by no listed process"} {
		if !strings.Contains(g.Message, want) {
			t.Errorf("GPU message %q lacks %q", g.Message, want)
		}
	}
	if p.GPU != nil || *p.PID != 538 || !*p.HeldToEnd || p.TimeToOOMS != nil || p.ProfileBytes != nil || len(p.ChangePoints) != 1 {
		t.Errorf("process finding %+v", p)
	}
	for _, want := range []string{"step: pid 538 (python3) on GPU GPU-3719ad94", "from 802 MiB to 4.8 GiB in 1.5 s", "cannot tell that from growth that stopped", "held 4.8 GiB until the end of the log"} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("process message %q lacks %q", p.Message, want)
		}
	}
	// The samples of a total cannot tell memory allocated once from growth
	// that stopped at a cap or an OOM (this pid's six rises of 768 MiB ended
	// at its OOM): the message must not call the step "not a leak".
	if strings.Contains(p.Message, "not a leak") {
		t.Errorf("process message %q calls a step not a leak", p.Message)
	}

	// JSON: no time to OOM is absent (null to a reader), with the reason;
	// other kinds carry none of the trend members.
	var buf bytes.Buffer
	leak := Finding{Kind: KindLeak, Path: "s.pickle", Bytes: 1, Message: "m"}
	if err := Write(&buf, Document{Kind: DocAnalysis, Report: &Report{Schema: Schema, Findings: []Finding{p, leak}}}, FormatJSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct{ Findings []map[string]any }
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if v, ok := doc.Findings[0]["time_to_oom_s"]; ok && v != nil {
		t.Errorf("time_to_oom_s %v", v)
	}
	if doc.Findings[0]["time_to_oom_reason"] != "a one-time step, then no growth" || doc.Findings[0]["classification"] != "step" {
		t.Errorf("process JSON %v", doc.Findings[0])
	}
	for _, k := range []string{"gpu", "pid", "classification", "slope_bytes_per_s", "r2", "window_start_us", "time_to_oom_reason"} {
		if _, ok := doc.Findings[1][k]; ok {
			t.Errorf("a leak finding has %q", k)
		}
	}
}

// Small unattributed memory is not worth a sentence.
func TestUnattributedThreshold(t *testing.T) {
	s := growingGPU()
	s.Unattributed.MedianBytes = 9 * mib
	if m := trendMessage(s, logClock{clock: "absolute"}); strings.Contains(m, "no listed process") {
		t.Errorf("9 MiB mentioned: %s", m)
	}
}

func TestRankTrends(t *testing.T) {
	f := func(k Kind, class string, b int64) Finding { return Finding{Kind: k, Classification: class, Bytes: b} }
	fs := []Finding{
		f(KindRetained, "", 9), f(KindTrend, "flat", 100), f(KindTrend, "growing", 1), f(KindLive, "", 5),
		f(KindTrend, "step", 50), f(KindLeak, "", 1), f(KindTrend, "sawtooth", 70), f(KindTrend, "growing", 2),
	}
	Rank(fs)
	var got []string
	for _, x := range fs {
		got = append(got, string(x.Kind)+":"+x.Classification)
	}
	want := "leak:,trend:growing,trend:growing,trend:step,trend:sawtooth,trend:flat,live:,retained:"
	if strings.Join(got, ",") != want {
		t.Errorf("rank %s", strings.Join(got, ","))
	}
	if fs[1].Bytes != 2 {
		t.Errorf("growing findings not by bytes: %d first", fs[1].Bytes)
	}
}

func TestSparklineAndRate(t *testing.T) {
	if got := sparkline([]int64{0, 1, 4, 8, 9}, 8); got != "▁▁▄██" {
		t.Errorf("sparkline %q", got)
	}
	for bps, want := range map[float64]string{5 * mib: "5.0 MiB/s", 0.5 * mib: "30 MiB/min", 100: "352 KiB/h", 0: "0"} {
		if got := rate(bps); got != want {
			t.Errorf("rate(%v) = %q, want %q", bps, got, want)
		}
	}
}

// Trend rows in the common findings table, and the trend table with a
// sparkline only on a terminal.
func TestTrendTables(t *testing.T) {
	_, fs := FromTrends([]TrendInput{{Path: "gpu.csv", Format: "nvidia-smi-query-gpu", Samples: 600, Clock: "absolute"}},
		&trend.Result{Series: []trend.SeriesTrend{growingGPU()}})
	rep := &Report{Inputs: []Input{{Path: "gpu.csv", Format: "nvidia-smi-query-gpu"}}, Findings: fs, FindingsTotal: 1}
	var buf bytes.Buffer
	if err := Write(&buf, Document{Kind: DocAnalysis, Report: rep}, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "gpu 0") || !strings.Contains(out, "+5.0 MiB/s") || !strings.Contains(out, "whole GPU (NVIDIA A100)") {
		t.Errorf("findings table:\n%s", out)
	}
	for _, tty := range []bool{false, true} {
		buf.Reset()
		if err := Write(&buf, Document{Kind: DocTrend, Report: rep}, FormatTable, Options{Terminal: tty}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.Contains(out, "▁") != tty || !strings.Contains(out, "17 min (17 min to 18 min)") {
			t.Errorf("terminal %v:\n%s", tty, out)
		}
	}
	if err := Write(&buf, Document{Kind: DocTrend, Report: rep}, Format("xml"), Options{}); err == nil {
		t.Error("unknown format accepted")
	}
}

// A DCGM log without times, its scrapes placed 30 s apart by default: the
// verdict gives what the log shows, per scrape, and the time-based figures
// only as conditional on the assumed period. The growing series of
// growingGPU at 5 MiB/s is 150 MiB per 30 s scrape; its 1024 s to OOM are
// 34 scrapes (1024/30 = 34.1). Given with --interval, the same log reads
// as measured.
func TestAssumedInterval(t *testing.T) {
	s := growingGPU()
	s.Input, s.Source = "dcgm.txt", "dcgm-prometheus"
	in := TrendInput{Path: "dcgm.txt", Format: "dcgm-prometheus", Samples: 600, StartUs: 0, EndUs: 599 * 30e6, Clock: "row-order", Interval: 30e9, IntervalAssumed: true}
	ins, fs := FromTrends([]TrendInput{in}, &trend.Result{Series: []trend.SeriesTrend{s}})
	if p := ins[0].AssumedIntervalS; p == nil || *p != 30 {
		t.Errorf("assumed_interval_s %v", p)
	}
	m := fs[0].Message
	for _, want := range []string{"grows 150 MiB per scrape", "in about 34 scrapes", "17 min (17 min to 18 min) only if they are 30 s apart", "--interval"} {
		if !strings.Contains(m, want) {
			t.Errorf("message %q lacks %q", m, want)
		}
	}
	if strings.Contains(m, "5.0 MiB/s") {
		t.Errorf("message %q gives a rate per second as if measured", m)
	}
	rep := &Report{Inputs: ins, Findings: fs, FindingsTotal: 1}
	var buf bytes.Buffer
	if err := Write(&buf, Document{Kind: DocTrend, Report: rep}, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "+150 MiB/scrape") || !strings.Contains(out, "34 scrapes") || !strings.Contains(out, "30 s apart assumed") {
		t.Errorf("trend table:\n%s", out)
	}

	in.IntervalAssumed = false
	ins, fs = FromTrends([]TrendInput{in}, &trend.Result{Series: []trend.SeriesTrend{s}})
	if ins[0].AssumedIntervalS != nil || !strings.Contains(fs[0].Message, "5.0 MiB/s") || strings.Contains(fs[0].Message, "per scrape") {
		t.Errorf("given interval: %v %q", ins[0].AssumedIntervalS, fs[0].Message)
	}
}

// A step whose change reaches the last samples claims no flat part.
func TestStepAtEndMessage(t *testing.T) {
	s := trend.SeriesTrend{Input: "gpu.csv", GPU: 0, HasGPU: true, Samples: 60, StartUs: 1e15, EndUs: 1e15 + 59*60e6,
		FirstBytes: 20 << 30, LastBytes: 22 << 30, PeakBytes: 22 << 30, Class: trend.Step, StepAtEnd: true,
		ChangePoints: []trend.ChangePoint{{StartUs: 1e15 + 57*60e6, EndUs: 1e15 + 58*60e6, FromBytes: 20 << 30, ToBytes: 22 << 30}}}
	m := trendMessage(s, logClock{clock: "absolute"})
	if strings.Contains(m, "then flat") || !strings.Contains(m, "up to its last samples") || !strings.Contains(m, "log for longer") {
		t.Errorf("message %q", m)
	}
}

// Unattributed memory with a process listed whose memory is unknown: the
// note names that process as what may hold it, rather than blaming a
// process NVML cannot see; without one, the note is as before.
func TestUnattributedNoteUnknownPIDs(t *testing.T) {
	s := trend.SeriesTrend{PeakBytes: 2 << 30, Unattributed: &trend.Unattributed{MedianBytes: 1 << 30, Samples: 3, UnknownPIDs: []int64{571, 600}}}
	if n := unattributedNote(s); !strings.Contains(n, "1.0 GiB of it is used by no process whose memory is known") || !strings.Contains(n, "pid 571, 600") || strings.Contains(n, "cannot see") {
		t.Errorf("note %q", n)
	}
	s.Unattributed.UnknownPIDs = nil
	if n := unattributedNote(s); !strings.Contains(n, "no listed process") {
		t.Errorf("note %q", n)
	}
}
