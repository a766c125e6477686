package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuleak/gpuleak/report"
)

const nvmlData = "../testdata/nvml/"

// runIO runs gpuleak with args against buffers; stdin feeds "-"; tty
// says whether standard output is a terminal.
func runIO(t *testing.T, stdin string, tty bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut, OutTTY: tty}
	code = Main(args, ios, "test")
	return code, out.String(), errOut.String()
}

// jsonReport is the part of gpuleak.report/v1 these tests read.
type trendReport struct {
	Schema string `json:"schema"`
	Inputs []struct {
		Path     string   `json:"path"`
		Format   string   `json:"format"`
		Samples  *int64   `json:"samples"`
		Rows     *int64   `json:"rows"`
		StartUs  *int64   `json:"start_us"`
		EndUs    *int64   `json:"end_us"`
		Clock    string   `json:"clock"`
		Warnings []string `json:"warnings"`
	} `json:"inputs"`
	Findings []struct {
		Kind              string          `json:"kind"`
		Path              string          `json:"path"`
		Source            string          `json:"source"`
		Device            *int            `json:"device"`
		Bytes             int64           `json:"bytes"`
		Message           string          `json:"message"`
		GPU               *int            `json:"gpu"`
		GPUUUID           string          `json:"gpu_uuid"`
		Host              string          `json:"host"`
		PID               *int64          `json:"pid"`
		Process           string          `json:"process"`
		Pod               string          `json:"pod"`
		Namespace         string          `json:"namespace"`
		Classification    string          `json:"classification"`
		Slope             *float64        `json:"slope_bytes_per_s"`
		SlopeRange        []float64       `json:"slope_range_bytes_per_s"`
		OLSSlope          *float64        `json:"ols_slope_bytes_per_s"`
		R2                *float64        `json:"r2"`
		TimeToOOM         json.RawMessage `json:"time_to_oom_s"`
		TimeToOOMRange    []float64       `json:"time_to_oom_range_s"`
		TimeToOOMReason   string          `json:"time_to_oom_reason"`
		WindowStartUs     *int64          `json:"window_start_us"`
		WindowEndUs       *int64          `json:"window_end_us"`
		Samples           int             `json:"samples"`
		SeriesStartUs     *int64          `json:"series_start_us"`
		PeakBytes         *int64          `json:"peak_bytes"`
		CapacityBytes     *int64          `json:"capacity_bytes"`
		UsedConvention    string          `json:"used_convention"`
		HeldToEnd         *bool           `json:"held_to_end"`
		UnattributedBytes *int64          `json:"unattributed_bytes"`
		ChangePoints      []struct {
			StartUs   int64 `json:"start_us"`
			EndUs     int64 `json:"end_us"`
			FromBytes int64 `json:"from_bytes"`
			ToBytes   int64 `json:"to_bytes"`
		} `json:"change_points"`
	} `json:"findings"`
	FindingsTotal int `json:"findings_total"`
}

func decodeTrend(t *testing.T, s string) trendReport {
	t.Helper()
	var r trendReport
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, s)
	}
	if r.Schema != "gpuleak.report/v1" {
		t.Fatalf("schema %q", r.Schema)
	}
	return r
}

const mib = 1 << 20

// The acceptance case of query_apps.csv through the command line.
func TestTrendQueryAppsJSON(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "trend", "--format", "json", nvmlData+"query_apps.csv")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := decodeTrend(t, out)
	if len(r.Inputs) != 1 || r.Inputs[0].Format != "nvidia-smi-query-apps" || *r.Inputs[0].Samples != 295 || r.Inputs[0].Clock != "absolute" {
		t.Errorf("input %+v", r.Inputs)
	}
	if len(r.Findings) != 7 || r.FindingsTotal != 7 {
		t.Fatalf("%d findings, want one per process (7)", len(r.Findings))
	}
	want := map[int64]string{469: "step", 502: "step", 538: "step", 565: "flat", 591: "flat", 617: "step", 646: "step"}
	for _, f := range r.Findings {
		if f.Kind != "trend" || f.PID == nil || f.Source != "nvidia-smi-query-apps" || f.Device != nil {
			t.Fatalf("finding %+v", f)
		}
		if f.Classification != want[*f.PID] {
			t.Errorf("pid %d: %s, want %s", *f.PID, f.Classification, want[*f.PID])
		}
		// Not credible: time_to_oom_s absent (null), and a reason.
		if (f.TimeToOOM != nil && string(f.TimeToOOM) != "null") || f.TimeToOOMReason == "" {
			t.Errorf("pid %d: time to OOM %s, reason %q", *f.PID, f.TimeToOOM, f.TimeToOOMReason)
		}
		if f.Slope == nil || f.R2 == nil || len(f.SlopeRange) != 2 || f.WindowStartUs == nil || f.WindowEndUs == nil {
			t.Errorf("pid %d: trend members missing: %+v", *f.PID, f)
		}
		if f.UsedConvention != "process" || f.HeldToEnd == nil || f.Message == "" {
			t.Errorf("pid %d: %+v", *f.PID, f)
		}
		if *f.PID == 538 {
			// 802 -> 4898 MiB in 1.5 s (fixtures README).
			if len(f.ChangePoints) != 1 || f.ChangePoints[0].FromBytes != 802*mib || f.ChangePoints[0].ToBytes != 4898*mib ||
				f.Bytes != 4898*mib || !strings.Contains(f.Message, "from 802 MiB to 4.8 GiB in 1.5 s") {
				t.Errorf("pid 538: %+v", f)
			}
		}
	}
	// gpuleak trend lists series by GPU, then pid.
	for i := 1; i < len(r.Findings); i++ {
		if *r.Findings[i].PID < *r.Findings[i-1].PID {
			t.Errorf("pid %d after %d", *r.Findings[i].PID, *r.Findings[i-1].PID)
		}
	}
	// gpuleak analyze ranks them: steps before flat series, larger first.
	_, out, _ = runIO(t, "", false, "analyze", "--format", "json", nvmlData+"query_apps.csv")
	r = decodeTrend(t, out)
	if len(r.Findings) != 7 || *r.Findings[0].PID != 538 || r.Findings[6].Classification != "flat" {
		t.Errorf("analyze order: first pid %d, last %s", *r.Findings[0].PID, r.Findings[6].Classification)
	}
}

// gpuleak analyze accepts NVML logs and emits trend findings.
func TestAnalyzeNVML(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", nvmlData+"query_gpu.csv", nvmlData+"pynvml.jsonl")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := decodeTrend(t, out)
	if len(r.Inputs) != 2 || r.Inputs[0].Format != "nvidia-smi-query-gpu" || r.Inputs[1].Format != "pynvml-jsonl" {
		t.Fatalf("inputs %+v", r.Inputs)
	}
	var gpus int
	for _, f := range r.Findings {
		if f.Kind != "trend" {
			t.Fatalf("kind %s", f.Kind)
		}
		if f.PID != nil {
			continue
		}
		gpus++
		// Both logs: 4907 MiB at the peak once pynvml's 615 MiB reservation
		// is left out (pynvml: 5521.875 - 615.0625 = 4906.8125 MiB).
		if f.Classification != "sawtooth" || *f.PeakBytes < 4906*mib || *f.PeakBytes > 4907*mib || f.Bytes != 0 {
			t.Errorf("%s: GPU %+v", f.Path, f)
		}
	}
	if gpus != 2 {
		t.Errorf("%d GPU findings, want 2", gpus)
	}
	// The table renders trend rows.
	code, out, _ = runIO(t, "", false, "analyze", nvmlData+"query_apps.csv")
	if code != ExitOK || !strings.Contains(out, "pid 538 python3") || !strings.Contains(out, "nvidia-smi-query-apps, 295 samples") {
		t.Errorf("table:\n%s", out)
	}
}

// The compact table of two logs of one run, against a golden file.
func TestTrendTableGolden(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "trend", nvmlData+"query_gpu.csv", nvmlData+"query_apps.csv")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "trend_query_gpu_apps.table.stdout", out)
}

// writeLeak writes a --query-gpu log of a GPU whose memory grows 5 MiB/s
// for 20 minutes after a 10 GiB step at 20 s, and its process log.
func writeLeak(t *testing.T) (gpu, apps string) {
	dir := t.TempDir()
	var g, a strings.Builder
	g.WriteString("timestamp, index, uuid, name, memory.total [MiB], memory.used [MiB], memory.free [MiB], memory.reserved [MiB]\n")
	a.WriteString("timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n")
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 1200; i++ {
		ts := t0.Add(time.Duration(i) * time.Second).Format("2006/01/02 15:04:05.000")
		p := 2000 + 5*i/64*64
		if i > 20 {
			p += 8000
		}
		u := p + 9
		fmt.Fprintf(&g, "%s, 0, GPU-aaaa1111-0000-0000-0000-000000000000, NVIDIA A100-SXM4-80GB, 81559 MiB, %d MiB, %d MiB, 500 MiB\n", ts, u, 81059-u)
		fmt.Fprintf(&a, "%s, GPU-aaaa1111-0000-0000-0000-000000000000, 4242, python3, %d MiB\n", ts, p)
	}
	gpu, apps = filepath.Join(dir, "gpu.csv"), filepath.Join(dir, "apps.csv")
	for p, s := range map[string]string{gpu: g.String(), apps: a.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return gpu, apps
}

// A leak: growing, a credible time to OOM with a range, --fail-on growing
// exits 1 after a complete report, and a terminal gets a sparkline.
func TestTrendGrowing(t *testing.T) {
	gpu, apps := writeLeak(t)
	code, out, errOut := runIO(t, "", false, "trend", "--format", "json", "--fail-on", "growing", gpu, apps)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d: %s", code, ExitFindings, errOut)
	}
	r := decodeTrend(t, out)
	if len(r.Findings) != 2 {
		t.Fatalf("%d findings", len(r.Findings))
	}
	for _, f := range r.Findings {
		if f.Classification != "growing" {
			t.Errorf("%s: %s", f.Path, f.Classification)
			continue
		}
		// The staircase grows 64 MiB per 12.8 s: 5 MiB/s.
		if *f.Slope < 4.75*mib || *f.Slope > 5.25*mib {
			t.Errorf("slope %.2f MiB/s", *f.Slope/mib)
		}
		var oom float64
		if err := json.Unmarshal(f.TimeToOOM, &oom); err != nil || len(f.TimeToOOMRange) != 2 || f.TimeToOOMReason != "" {
			t.Fatalf("time to OOM %s %v %q", f.TimeToOOM, f.TimeToOOMRange, f.TimeToOOMReason)
		}
		// Headroom at the end: 81059 MiB less 10000 + 5*1199/64*64 + 9 = 15993 MiB; at 5 MiB/s, about 13000 s.
		if oom < 12000 || oom > 14000 || f.TimeToOOMRange[0] > oom || f.TimeToOOMRange[1] < oom {
			t.Errorf("time to OOM %.0f s %v", oom, f.TimeToOOMRange)
		}
		// The trend is fitted after the 8 GiB step at 20 s.
		if *f.WindowStartUs-*f.SeriesStartUs < 20e6 {
			t.Errorf("window starts %d µs in", *f.WindowStartUs-*f.SeriesStartUs)
		}
	}
	if r.Findings[0].UnattributedBytes == nil || *r.Findings[0].UnattributedBytes != 9*mib {
		t.Errorf("unattributed %v", r.Findings[0].UnattributedBytes)
	}

	code, out, _ = runIO(t, "", true, "trend", gpu)
	if code != ExitOK || !strings.Contains(out, "█") || !strings.Contains(out, "peak 16 GiB of 79 GiB") {
		t.Errorf("terminal output:\n%s", out)
	}
	if !strings.Contains(out, "runs out of memory in about 3.6 h") {
		t.Errorf("message:\n%s", out)
	}
}

// --tz, --date, --fields, --start and --interval place samples in time.
func TestTrendTimeFlags(t *testing.T) {
	start := func(args ...string) int64 {
		t.Helper()
		code, out, errOut := runIO(t, "", false, append([]string{"trend", "--format", "json"}, args...)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return *decodeTrend(t, out).Inputs[0].StartUs
	}
	utc := start(nvmlData + "query_gpu.csv")
	if berlin := start("--tz", "Europe/Berlin", nvmlData+"query_gpu.csv"); utc-berlin != 3600e6 {
		t.Errorf("--tz Europe/Berlin moved the start by %d µs, want 1 h earlier (CET)", utc-berlin)
	}
	if off := start("--tz", "+05:30", nvmlData+"query_gpu.csv"); utc-off != 5.5*3600e6 {
		t.Errorf("--tz +05:30 moved the start by %d µs", utc-off)
	}
	// pmon -o T starts at 09:08:02 of the day --date gives.
	if got, want := start("--date", "2026-11-30", nvmlData+"pmon_mu_T.txt"), time.Date(2026, 11, 30, 9, 8, 2, 0, time.UTC).UnixMicro(); got != want {
		t.Errorf("--date: start %d, want %d", got, want)
	}
	// dmon without times: row order from --start, --interval apart.
	code, out, _ := runIO(t, "", false, "trend", "--format", "json", "--start", "2026-11-30 09:08:02", "--interval", "2s", nvmlData+"dmon_mu.txt")
	r := decodeTrend(t, out)
	if code != ExitOK || *r.Inputs[0].StartUs != time.Date(2026, 11, 30, 9, 8, 2, 0, time.UTC).UnixMicro() ||
		*r.Inputs[0].EndUs-*r.Inputs[0].StartUs != 63*2e6 || r.Inputs[0].Clock != "row-order" {
		t.Errorf("--start --interval: %+v", r.Inputs[0])
	}
	// Header-less CSV in another order, without a timestamp first: --fields.
	p := filepath.Join(t.TempDir(), "smi.log")
	os.WriteFile(p, []byte("0, 100, 2026/11/30 10:00:00.000\n0, 100, 2026/11/30 10:00:01.000\n"), 0o644)
	if code, _, errOut := runIO(t, "", false, "trend", p); code != ExitInput || !strings.Contains(errOut, "needs --fields") {
		t.Errorf("without --fields: exit %d: %s", code, errOut)
	}
	if got := start("--fields", "index,memory.used,timestamp", p); got != time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC).UnixMicro() {
		t.Errorf("--fields: start %d", got)
	}
}

// gpustat JSON from standard input; DCGM text with pod labels.
func TestTrendGpustatAndDCGM(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&in, `{"hostname": "node-7", "query_time": "2026-11-30T08:06:1%d.000000", "gpus": [{"index": 0, "uuid": "GPU-9", "name": "A100",
  "memory.used": %d, "memory.total": 81920, "processes": [{"pid": 7, "command": "python", "gpu_memory_usage": 100}]}]}
`, i, 1000+i)
	}
	code, out, errOut := runIO(t, in.String(), false, "trend", "--format", "json", "-")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := decodeTrend(t, out)
	if r.Inputs[0].Path != "-" || r.Inputs[0].Format != "gpustat-json" || len(r.Findings) != 2 || r.Findings[0].Host != "node-7" ||
		r.Findings[0].UsedConvention != "includes-reserved-unknown" || *r.Findings[1].PID != 7 {
		t.Errorf("gpustat: %+v", r)
	}

	dcgm := "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n"
	for i := 0; i < 3; i++ {
		dcgm += fmt.Sprintf("DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"node-1\",namespace=\"ml\",pod=\"train-0\",container=\"c\"} %d %d\n", 38214+i, 1796025972000+int64(i)*15000)
	}
	p := filepath.Join(t.TempDir(), "metrics.prom")
	os.WriteFile(p, []byte(dcgm), 0o644)
	code, out, errOut = runIO(t, "", false, "trend", "--format", "json", p)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r = decodeTrend(t, out)
	f := r.Findings[0]
	if r.Inputs[0].Format != "dcgm-prometheus" || f.Pod != "train-0" || f.Namespace != "ml" || f.Host != "node-1" || f.Bytes != 38216*mib ||
		!strings.Contains(f.Message, "pod ml/train-0") {
		t.Errorf("dcgm: %+v", f)
	}
}

// Bad inputs and flags: exit 2 with the file and line.
func TestTrendErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	garbage := write("garbage.txt", "hello\nworld\n")
	smiXML := write("smi.xml", "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<timestamp>Mon Dec  1 02:00:58 2026</timestamp>\n</nvidia_smi_log>\n")
	empty := write("empty.csv", "")
	// A log whose only row is cut: nothing to read (one with rows beside
	// a cut one is read in part: TestReadInPart).
	trunc := write("trunc.csv", "timestamp, index, memory.used [MiB]\n2026/01/02 03:04:06.000, 0")
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"trend", garbage}, ExitInput, garbage + ":1: not an NVML sample log"},
		{[]string{"trend", empty}, ExitInput, empty + ":1: empty input"},
		{[]string{"trend", trunc}, ExitInput, trunc + ":2: 2 fields, but the header names 3"},
		{[]string{"analyze", trunc}, ExitInput, trunc + ":2:"},
		{[]string{"trend", "../testdata/pytorch/leak_train_loop.pickle"}, ExitInput, "use gpuleak analyze"},
		// Other families' inputs are named as what they are, with the
		// command that reads them (an OOM log was "not an NVML sample log
		// ... a header-less CSV log not starting with a timestamp needs
		// --fields").
		{[]string{"trend", "../testdata/pytorch/oom_error.txt"}, ExitInput, "oom_error.txt: byte offset 0: a pytorch-oom-message input (by its content), not an NVML sample log: use gpuleak oom or gpuleak analyze"},
		{[]string{"trend", "../testdata/pytorch/memory_stats.json"}, ExitInput, "a pytorch-memory-stats input (by its content), not an NVML sample log: use gpuleak oom"},
		{[]string{"trend", "../testdata/kineto/profile_keep_outputs_trace.json.gz"}, ExitInput, "a pytorch-profiler-trace input (by its content), not an NVML sample log: use gpuleak analyze"},
		// A tool's error saved in place of its samples, and nvidia-smi's
		// XML, are named as analyze names them (README: "an error says so
		// and names the forms to give instead").
		{[]string{"trend", "../testdata/toolerror/nvidia_smi_no_driver.csv"}, ExitInput, "nvidia_smi_no_driver.csv:1: nvidia-smi's error, not its output: \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver\""},
		// Read since session 42: a report without a GPU holds no memory.
		{[]string{"trend", smiXML}, ExitInput, smiXML + ":4: no GPU memory in this nvidia-smi XML (nvidia-smi -q -x): no <fb_memory_usage> of a <gpu> in it"},
		{[]string{"trend", "--tz", "Mars/Olympus", nvmlData + "dmon.txt"}, ExitInput, "bad --tz"},
		{[]string{"trend", "--date", "30.11.2026", nvmlData + "dmon.txt"}, ExitInput, "bad --date"},
		{[]string{"trend", "--fail-on", "leaky", nvmlData + "dmon.txt"}, ExitInput, "bad --fail-on"},
		{[]string{"trend", "--gpu-memory", "lots", nvmlData + "dmon.txt"}, ExitInput, "bad --gpu-memory"},
		{[]string{"trend"}, ExitInput, "needs at least one FILE"},
		{[]string{"trend", "-", "-"}, ExitInput, "only once"},
	}
	for _, tt := range tests {
		code, _, errOut := runIO(t, "", false, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, tt.code, tt.msg)
		}
	}
}

// The H200 recording of a process that leaks 128 MiB per 0.5 s for 30 s
// and exits (testdata/README.md): the GPU's memory climbs to 8301 MiB and
// drops back to 0 MiB at 02:01:17.333 UTC. The verdict is a run that grew
// until it ended (not churn), its bytes the run's peak, with no time to OOM.
func TestAnalyzeLeakThenExit(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", nvmlData+"leak_exit_query_gpu.csv")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Findings []struct {
			Classification string  `json:"classification"`
			Bytes          int64   `json:"bytes"`
			LastBytes      *int64  `json:"last_bytes"`
			ReleasedUs     *int64  `json:"released_us"`
			TimeToOOM      *string `json:"time_to_oom_s"`
			Slope          float64 `json:"slope_bytes_per_s"`
			Runs           []struct {
				Classification string `json:"classification"`
				PeakBytes      int64  `json:"peak_bytes"`
			} `json:"runs"`
			Message string `json:"message"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 {
		t.Fatalf("%d findings", len(r.Findings))
	}
	f := r.Findings[0]
	if f.Classification != "growing" || f.Bytes != 8301*mib || f.LastBytes == nil || *f.LastBytes != 0 ||
		f.ReleasedUs == nil || *f.ReleasedUs != 1796090477_333_000 || f.TimeToOOM != nil {
		t.Errorf("finding %+v", f)
	}
	if len(f.Runs) != 1 || f.Runs[0].Classification != "growing" || f.Runs[0].PeakBytes != 8301*mib {
		t.Errorf("runs %+v", f.Runs)
	}
	for _, want := range []string{"growing until it ended", "GPU 0 (NVIDIA H200)", "256 MiB/s", "came back to 0 B at 02:01:17 UTC"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
}

// gpuleak analyze takes --fields, --tz and --gpu-memory like gpuleak trend.
// The header-less log is the H200 recording's --query-gpu rows cut to
// index, memory.used and memory.total (in that order, no timestamp).
func TestAnalyzeNVMLFlags(t *testing.T) {
	data, err := os.ReadFile(nvmlData + "leak_exit_query_gpu.csv")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		f := strings.Split(line, ", ")
		fmt.Fprintf(&b, "%s, %s, %s\n", f[1], f[5], f[4])
	}
	path := filepath.Join(t.TempDir(), "noheader.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runIO(t, "", false, "analyze", path)
	if code != ExitInput || !strings.Contains(errOut, "--fields") {
		t.Errorf("without --fields: exit %d, %s", code, errOut)
	}
	code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", "--fields", "index,memory.used,memory.total", path)
	if code != ExitOK {
		t.Fatalf("with --fields: exit %d: %s", code, errOut)
	}
	r := decodeTrend(t, out)
	if len(r.Findings) != 1 || r.Findings[0].Classification != "growing" || r.Findings[0].Bytes != 8301*mib {
		t.Errorf("with --fields: %+v", r.Findings)
	}
	// --tz: the recording's UTC times read as Berlin time (UTC+1 in December).
	_, out, _ = runIO(t, "", false, "analyze", "--format", "json", "--tz", "Europe/Berlin", nvmlData+"leak_exit_query_gpu.csv")
	if r := decodeTrend(t, out); r.Inputs[0].StartUs == nil || *r.Inputs[0].StartUs != 1796090440_526000-3600e6 {
		t.Errorf("--tz: start %v", r.Inputs[0].StartUs)
	}
	if code, _, errOut := runIO(t, "", false, "analyze", "--gpu-memory", "lots", nvmlData+"query_apps.csv"); code != ExitInput || !strings.Contains(errOut, "--gpu-memory") {
		t.Errorf("bad --gpu-memory: exit %d %s", code, errOut)
	}
}

// A job log that prints nvidia-smi's table first and fails with an OOM
// later (the recorded table, then the fixture's traceback): the OOM is the
// finding, not a one-sample NVML trend.
func TestAnalyzeTableThenOOM(t *testing.T) {
	table, err := os.ReadFile(nvmlData + "leak_exit_nvidia_smi_default.txt")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := os.ReadFile(filepath.Join("..", "testdata", "pytorch", "oom_traceback.txt"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "job.log")
	if err := os.WriteFile(path, []byte("$ nvidia-smi\n"+string(table)+"$ python oom.py\n"+string(tb)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := decodeTrend(t, out)
	if r.Inputs[0].Format != "pytorch-oom-message" || len(r.Findings) == 0 || r.Findings[0].Kind != "oom" {
		t.Errorf("format %s, findings %+v", r.Inputs[0].Format, r.Findings)
	}
}

// gpuleak analyze judges the NVML logs it is given together, as gpuleak
// trend does: the H200 recording's --query-compute-apps log (pid 878,
// 740 .. 8292 MiB, last row at 02:01:17.108) beside its --query-gpu log,
// which runs on to 02:01:22 with the GPU back at 0 MiB, shows that the
// process exited: not held to the end, not "end unknown", its GPU named by
// index. Alone, the apps log cannot tell (TestTrendAppsOnly...); judged
// apart, analyze said "whether it exited then is not known: log
// --query-gpu beside it" with that very log beside it.
func TestAnalyzeLinksGPUAndAppsLogs(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "analyze", "--format", "json",
		nvmlData+"leak_exit_query_gpu.csv", nvmlData+"leak_exit_query_apps.csv")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Findings []struct {
			PID               *int64 `json:"pid"`
			Classification    string `json:"classification"`
			Bytes             int64  `json:"bytes"`
			HeldToEnd         *bool  `json:"held_to_end"`
			EndUnknown        bool   `json:"end_unknown"`
			UnattributedBytes *int64 `json:"unattributed_bytes"`
			Message           string `json:"message"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 2 {
		t.Fatalf("%d findings, want the GPU and pid 878", len(r.Findings))
	}
	for _, f := range r.Findings {
		if f.Classification != "growing" {
			t.Errorf("classification %q: %s", f.Classification, f.Message)
		}
		if f.PID == nil {
			// The GPU's used memory less its processes': nvidia-smi's
			// ~9 MiB beyond them, known only with the apps log linked.
			if f.Bytes != 8301*mib || f.UnattributedBytes == nil || *f.UnattributedBytes > 16*mib {
				t.Errorf("GPU finding: %d bytes, unattributed %v", f.Bytes, f.UnattributedBytes)
			}
			continue
		}
		if *f.PID != 878 || f.Bytes != 8292*mib || f.HeldToEnd == nil || *f.HeldToEnd || f.EndUnknown {
			t.Errorf("process finding: pid %d, %d bytes, held %v, end unknown %v", *f.PID, f.Bytes, f.HeldToEnd, f.EndUnknown)
		}
		for _, want := range []string{"growing until it ended", "on GPU 0:", "exited at 02:01:17 UTC"} {
			if !strings.Contains(f.Message, want) {
				t.Errorf("message lacks %q: %s", want, f.Message)
			}
		}
		if strings.Contains(f.Message, "not known") {
			t.Errorf("message says the end is not known: %s", f.Message)
		}
	}
}

// An NVML log that fails part way through costs only itself, and leaves
// none of its samples among the others' series: a GPU 1 read from its
// first rows (more than one record batch of 65536 rows, so that some
// reach the analyzer before the error) must not appear.
func TestAnalyzeNVMLFailedInputLeavesNoSamples(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "cut.csv")
	var data strings.Builder
	data.WriteString("timestamp, index, memory.used [MiB], memory.total [MiB]\n")
	const rows = 70000
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		fmt.Fprintf(&data, "%s, 1, %d MiB, 143771 MiB\n", start.Add(time.Duration(i)*time.Second).Format("2006/01/02 15:04:05.000"), 100+i/100)
	}
	// A second header without memory.used: no row after it can give a
	// sample, and the log fails there (a cut row would be skipped).
	data.WriteString("timestamp, index, utilization.gpu [%]\n")
	if err := os.WriteFile(bad, []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", nvmlData+"leak_exit_query_gpu.csv", bad)
	if code != ExitInput || !strings.Contains(errOut, fmt.Sprintf("cut.csv:%d", rows+2)) {
		t.Fatalf("exit %d, stderr %q; want %d naming cut.csv:%d", code, errOut, ExitInput, rows+2)
	}
	var r struct {
		Findings []struct {
			GPU *int `json:"gpu"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || r.Findings[0].GPU == nil || *r.Findings[0].GPU != 0 {
		t.Errorf("findings %+v: want GPU 0 of the readable log only", r.Findings)
	}
}

// An input's samples are its sampling instants, as a finding's are its
// series' (s32): one nvidia-smi table of a GPU and two processes is "1
// sample", not 3 (its rows); four such tables are 4 samples, as each of
// their series says. A GPU whose memory cell nvidia-smi's table cut is
// kept with what is whole: cut_total's 134473 MiB used, its total
// unknown (no capacity); cut_used's used unknown, so no GPU finding
// rather than one of 0 bytes.
func TestAnalyzeSmiTableSamples(t *testing.T) {
	b, err := os.ReadFile(nvmlData + "s31_nvidia_smi_truncated_proc.txt")
	if err != nil {
		t.Fatal(err)
	}
	one := string(b)
	var four strings.Builder
	for i, used := range []string{"100000", "115000", "130000", "134473"} {
		table := strings.Replace(one, "08:59:58", fmt.Sprintf("09:0%d:58", i), 1)
		four.WriteString(strings.Replace(table, "134473MiB /", used+"MiB /", 1))
	}
	const mem = "134473MiB / 143771MiB"
	dir := t.TempDir()
	files := map[string]string{
		"one.txt":       one,
		"four.txt":      four.String(),
		"cut_total.txt": strings.Replace(one, mem, "134473MiB / 1437...", 1),
		"cut_used.txt":  strings.Replace(one, mem, "1344...   / 143771MiB", 1),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	analyze := func(name string) (string, trendReport) {
		t.Helper()
		path := filepath.Join(dir, name)
		code, out, errOut := runIO(t, "", false, "analyze", path)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		code, js, errOut := runIO(t, "", false, "analyze", "--format", "json", path)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		return out, decodeTrend(t, js)
	}

	out, r := analyze("one.txt")
	if !strings.Contains(out, "nvidia-smi-text, 1 sample at 2026-12-02 08:59:58 UTC\n") || !strings.Contains(out, "one sample: no trend can be judged") {
		t.Errorf("one table:\n%s", out)
	}
	if in := r.Inputs[0]; *in.Samples != 1 || *in.Rows != 3 {
		t.Errorf("one table: %d samples, %d rows; want 1, 3", *in.Samples, *in.Rows)
	}

	out, r = analyze("four.txt")
	if !strings.Contains(out, "nvidia-smi-text, 4 samples from 2026-12-02 09:00:58 to 09:03:58 UTC (3 min)") {
		t.Errorf("four tables:\n%s", out)
	}
	if in := r.Inputs[0]; *in.Samples != 4 || *in.Rows != 12 {
		t.Errorf("four tables: %d samples, %d rows; want 4, 12", *in.Samples, *in.Rows)
	}
	for _, f := range r.Findings {
		if f.Samples != 4 {
			t.Errorf("four tables: %s %v: %d samples, want the input's 4", f.Classification, f.PID, f.Samples)
		}
	}

	_, r = analyze("cut_total.txt")
	var gpu bool
	for _, f := range r.Findings {
		if f.PID == nil {
			gpu = true
			if f.Bytes != 134473*mib || f.CapacityBytes != nil || !strings.Contains(f.Message, "131 GiB used;") {
				t.Errorf("cut_total: GPU finding %+v: want 134473 MiB used and no total", f)
			}
		}
	}
	if w := strings.Join(r.Inputs[0].Warnings, "\n"); !gpu || !strings.Contains(w, "line 10: GPU 0's memory cell is cut") || strings.Contains(w, "missing") {
		t.Errorf("cut_total: GPU finding %v, warnings %q", gpu, r.Inputs[0].Warnings)
	}

	_, r = analyze("cut_used.txt")
	for _, f := range r.Findings {
		if f.PID == nil {
			t.Errorf("cut_used: a GPU finding from an unknown used memory: %+v", f)
		}
	}
	if w := strings.Join(r.Inputs[0].Warnings, "\n"); !strings.Contains(w, "line 10: GPU 0's memory cell is cut") || !strings.Contains(w, "used memory is unknown (not 0)") {
		t.Errorf("cut_used: warnings %q", r.Inputs[0].Warnings)
	}
}

// An nvidia-smi table whose Processes box lists no process (the CrossE
// issue: 12799 MiB used, "No processes seem to be using it") says that
// nvidia-smi listed none, with its limits, and gives the memory as
// unattributed; with one 20 MiB row, the rest is said to be used by no
// listed process.
func TestAnalyzeSmiTableNoProcesses(t *testing.T) {
	const table = `+-----------------------------------------------------------------------------+
| NVIDIA-SMI 410.48                 Driver Version: 410.48                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla P100-SXM2...  Off  | 00000000:05:00.0 Off |                    0 |
| N/A   36C    P0    41W / 300W |  12799MiB / 16280MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
ROWS+-----------------------------------------------------------------------------+
`
	dir := t.TempDir()
	for _, c := range []struct{ name, rows, want string }{
		{"none.txt", "", "nvidia-smi listed no process on this GPU, so no listed process accounts for 12 GiB of it (one sample): this does not show that another process holds it"},
		{"norun.txt", "|  No running processes found                                                 |\n", "nvidia-smi listed no process on this GPU"},
		{"one.txt", "|    0     12345      C   python                                        20MiB |\n", "12 GiB of it is used by no listed process (one sample)"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(strings.Replace(table, "ROWS", c.rows, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runIO(t, "", false, "analyze", path)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: want %q in:\n%s", c.name, c.want, out)
		}
		if listed := strings.Contains(out, "nvidia-smi listed no process"); listed != (c.rows != "" && !strings.Contains(c.rows, "python")) && c.name != "none.txt" {
			t.Errorf("%s: 'listed no process' said: %v:\n%s", c.name, listed, out)
		}
		_, js, _ := runIO(t, "", false, "analyze", "--format", "json", path)
		if !strings.Contains(js, `"unattributed_bytes"`) {
			t.Errorf("%s: no unattributed_bytes in JSON:\n%s", c.name, js)
		}
	}
}

// nvidia-smi -q says per GPU whether it saw a process: "Processes : None"
// is the table's empty Processes box. The H100 NVL report (two GPUs,
// "Processes : None" each) with its Used raised from 0 to 530 MiB (Free
// lowered to match; at 0 MiB there is nothing unattributed to speak of)
// gets the "listed no process" note for 530 MiB on each GPU, as the table
// does; -q -d MEMORY (the gnome applet paste: 1934 MiB used, no Processes
// section) says nothing of processes: not known, no note. s35's table with
// its process rows N/A keeps GPU 3's note (no row there) and names pids
// 12345 and 12346 on GPUs 0 and 2, whose used memory (39 and 59 GiB) no
// process with a known memory accounts for.
func TestAnalyzeSmiQProcessesNone(t *testing.T) {
	b, err := os.ReadFile(nvmlData + "field/thamada_h100nvl_q_processes_none.txt")
	if err != nil {
		t.Fatal(err)
	}
	q := strings.ReplaceAll(string(b), "        Used                              : 0 MiB\n        Free                              : 95235 MiB",
		"        Used                              : 530 MiB\n        Free                              : 94705 MiB")
	if strings.Count(q, ": 530 MiB") != 2 {
		t.Fatal("the report's FB Memory Usage sections were not found")
	}
	path := filepath.Join(t.TempDir(), "q530.txt")
	if err := os.WriteFile(path, []byte(q), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ := runIO(t, "", false, "analyze", path)
	if n := strings.Count(out, "nvidia-smi listed no process on this GPU, so no listed process accounts for 530 MiB of it"); n != 2 {
		t.Errorf("-q Processes None: %d notes, want 2:\n%s", n, out)
	}
	_, js, _ := runIO(t, "", false, "analyze", "--format", "json", path)
	if n := strings.Count(js, `"unattributed_none_listed": true`); n != 2 {
		t.Errorf("-q Processes None: %d unattributed_none_listed, want 2", n)
	}
	_, out, _ = runIO(t, "", false, "analyze", nvmlData+"field/gnomeapplet356_q_d_memory_2017.txt")
	if strings.Contains(out, "listed no process") || strings.Contains(out, "no listed process") {
		t.Errorf("-q -d MEMORY: a claim about processes it does not list:\n%s", out)
	}
	_, out, _ = runIO(t, "", false, "analyze", nvmlData+"s35_nvidia_smi_na_procs.txt")
	for _, want := range []string{
		"GPU 3 (NVIDIA H100 80GB HBM3): 530 MiB of 80 GiB used",
		"nvidia-smi listed no process on this GPU, so no listed process accounts for 530 MiB",
		"39 GiB of it is used by no process whose memory is known (one sample): pid 12345, listed with its memory unknown",
		"59 GiB of it is used by no process whose memory is known (one sample): pid 12346, listed with its memory unknown",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("N/A table: want %q in:\n%s", want, out)
		}
	}
	if strings.Count(out, "listed no process") != 1 {
		t.Errorf("N/A table: 'listed no process' said of a GPU with a listed process:\n%s", out)
	}
}

// An input trend cannot read costs only itself, as analyze's do (README,
// Exit codes: "with several inputs the report of the others is written
// first"): the others are judged and written, it is listed NOT READ, and
// the exit code is 2, over a tripped --fail-on too. A log that fails part
// way through leaves none of the samples read before its error behind: the others' findings are those they give alone.
// Before, one bad input gave no report at all.
func TestTrendUnreadInputCostsOnlyItself(t *testing.T) {
	apps := td + "nvml/query_apps.csv"
	gpu, err := os.ReadFile(td + "nvml/query_gpu.csv")
	if err != nil {
		t.Fatal(err)
	}
	// Cut mid-row, then a header without memory.used (another query
	// appended to the file): a log that fails there. A cut row alone is
	// skipped, the log read in part (TestReadInPart).
	cut := writeCut(t, "cut_gpu.csv", append(gpu[:len(gpu)*6/10:len(gpu)*6/10], "\ntimestamp, index, utilization.gpu [%]\n"...))
	code, alone, errs := run(t, nil, "trend", "--format", "json", apps)
	if code != 0 {
		t.Fatalf("apps alone: exit %d: %s", code, errs)
	}
	code, both, errs := run(t, nil, "trend", "--format", "json", apps, cut)
	if code != 2 || !strings.Contains(errs, "cut_gpu.csv:") {
		t.Fatalf("exit %d, stderr %q: want 2 naming cut_gpu.csv", code, errs)
	}
	var a, b struct {
		Inputs   []map[string]any  `json:"inputs"`
		Findings []json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal([]byte(alone), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(both), &b); err != nil {
		t.Fatalf("%v: %q", err, both)
	}
	if len(b.Inputs) != 2 || b.Inputs[0]["path"] != apps || b.Inputs[1]["path"] != cut || b.Inputs[1]["error"] == nil {
		t.Errorf("inputs %v: want %s, then %s with its error", b.Inputs, apps, cut)
	}
	if len(a.Findings) == 0 || fmt.Sprint(a.Findings) != fmt.Sprint(b.Findings) {
		t.Errorf("findings beside the cut log differ from apps.csv's alone:\n%s\nwant\n%s", b.Findings, a.Findings)
	}
	// query_apps.csv: pid 538 is a step (../shared/fixtures/README.md).
	code, out, _ := run(t, nil, "trend", "--fail-on", "step", apps, cut)
	if code != 2 || !strings.Contains(out, "NOT READ: ") {
		t.Errorf("--fail-on step beside the cut log: exit %d, stdout %q; want 2 and the report", code, out)
	}
}

func writeCut(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// s37: NVML samples whose used memory exceeds the GPU's total (the
// tester's log, 10,000,000,000 MiB and up on a 143771 MiB H200) gave
// "runs out of memory in about 0 s" and no warning; then they were kept
// in the series with a warning, so that the first file still made a
// "growing" trend of 954 TiB/s. testdata/README.md gives each file's
// rows: in the first every sample (12) is above the total, in the second
// only sample 8 (900000 MiB). Such samples are left out of the series
// and counted (samples_above_total on the input and on the finding), with
// a warning naming the first and one on standard error: the first file
// gives no series at all; the second, GPU 0's 11 good samples, 20000 +
// 100 i MiB: growing 100 MiB/s to a peak of 21100 MiB (not 900000).
func TestTrendUsedAboveTotal(t *testing.T) {
	for _, c := range []struct {
		file, warn string
		left       int
		findings   int
	}{
		{"s37_used_above_total.csv", "GPU 0: sample 1 (2026-11-30 08:06:10 UTC) has used memory 9.3 PiB, more than the GPU's total memory in its row (140 GiB), and so do 11 more samples", 12, 0},
		{"s37_one_sample_above_total.csv", "GPU 0: sample 8 (2026-11-30 08:06:17 UTC) has used memory 879 GiB, more than the GPU's total memory in its row (140 GiB):", 1, 1},
	} {
		path := td + "nvml/" + c.file
		code, out, errOut := run(t, nil, "trend", "--format", "json", path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.file, code, errOut)
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Inputs) != 1 || len(rep.Findings) != c.findings || rep.Inputs[0].SamplesAboveTotal != c.left {
			t.Fatalf("%s: %d inputs, %d findings, %d samples above the total; want 1, %d, %d", c.file, len(rep.Inputs), len(rep.Findings), rep.Inputs[0].SamplesAboveTotal, c.findings, c.left)
		}
		if !slices.ContainsFunc(rep.Inputs[0].Warnings, func(w string) bool { return strings.Contains(w, c.warn) }) {
			t.Errorf("%s: warnings %q, want one with %q", c.file, rep.Inputs[0].Warnings, c.warn)
		}
		if want := fmt.Sprintf("gpuleak: warning: %s: %s used memory above the GPU's total memory", path, counted(c.left, "sample has", "samples have")); !strings.Contains(errOut, want) {
			t.Errorf("%s: stderr %q, want %q", c.file, errOut, want)
		}
		if c.findings == 0 {
			continue
		}
		f := rep.Findings[0]
		const mib = 1 << 20
		if f.Classification != "growing" || f.Samples != 11 || f.SamplesAboveTotal != 1 || f.PeakBytes == nil || *f.PeakBytes != 21100*mib ||
			f.SlopeBytesPerS == nil || *f.SlopeBytesPerS != 100*mib {
			t.Errorf("%s: %s, %d samples (%d left out), peak %v, slope %v; want growing, 11 (1), 21100 MiB, 100 MiB/s",
				c.file, f.Classification, f.Samples, f.SamplesAboveTotal, f.PeakBytes, f.SlopeBytesPerS)
		}
	}
}

// A fleet's --query-gpu collected with pdsh (testdata/nvml/fleet_pdsh_query_gpu.txt):
// node01 and node02 both have a GPU 0, their lines interleaved. Each is a
// series of its own: node01's grows 1000 MiB a second (1000 to 4000 MiB
// over 3 s), node02's stays at 5000 MiB. Without their hosts the rows
// would make one GPU 0 that jumps between the two hosts' figures. The table names the host; the
// failed node03 is named in a warning.
func TestTrendFleetPdsh(t *testing.T) {
	path := nvmlData + "fleet_pdsh_query_gpu.txt"
	code, out, errOut := runIO(t, "", false, "trend", "--format", "json", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	gpu0 := map[string]report.Finding{}
	for _, f := range rep.Findings {
		if f.GPU != nil && *f.GPU == 0 {
			gpu0[f.Host] = f
		}
	}
	if len(rep.Findings) != 4 || len(gpu0) != 2 {
		t.Fatalf("%d findings, GPU 0 of %d hosts; want 4, 2", len(rep.Findings), len(gpu0))
	}
	if f := gpu0["node01"]; f.Classification != "growing" || f.SlopeBytesPerS == nil || *f.SlopeBytesPerS != 1000*mib || f.Samples != 4 {
		t.Errorf("node01 GPU 0: %s, slope %v, %d samples; want growing, 1000 MiB/s, 4", f.Classification, f.SlopeBytesPerS, f.Samples)
	}
	if f := gpu0["node02"]; f.Classification != "flat" || f.Bytes != 5000*mib || f.Samples != 4 {
		t.Errorf("node02 GPU 0: %s, %d bytes, %d samples; want flat, 5000 MiB, 4", f.Classification, f.Bytes, f.Samples)
	}
	if len(rep.Inputs) != 1 || !slices.ContainsFunc(rep.Inputs[0].Warnings, func(w string) bool {
		return strings.Contains(w, "line 8: host node03 failed (pdsh says \"ssh exited with exit code 255\")")
	}) {
		t.Errorf("warnings do not name node03: %+v", rep.Inputs)
	}
	_, out, _ = runIO(t, "", false, "trend", path)
	if !strings.Contains(out, " #  HOST    GPU ") || !strings.Contains(out, "GPU 0 of node01") {
		t.Errorf("table:\n%s", out)
	}
	_, out, _ = runIO(t, "", false, "analyze", path)
	if !strings.Contains(out, "trend  node01 gpu 0  3.9 GiB") || !strings.Contains(out, "trend  node02 gpu 0  4.9 GiB") {
		t.Errorf("analyze table:\n%s", out)
	}
}
