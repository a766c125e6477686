package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestU48bNoFindingsSaysLeaksUnjudged: a memory timeline of one forward
// pass whose activations are all freed by its end (12 points, 1 step:
// u48b_forward_freed_12points_memory_timeline.json) and a real profiler
// trace of 3 steps (hm_train_s3_clean.trace.json.gz) hold nothing at
// their end, and neither can judge growth across steps. Before, the
// table and the Markdown headed them "No findings." / "no findings"
// above a warning that growth could not be judged; the headline now says
// the findings cover what could be judged and names each input whose
// leaks were not, with why; so does an NVML log all of whose samples
// were left out. JSON says it per input (leaks_unjudged,
// samples_above_total).
func TestU48bNoFindingsSaysLeaksUnjudged(t *testing.T) {
	tl, tr := td+"kineto/u48b_forward_freed_12points_memory_timeline.json", td+"kineto/hm_train_s3_clean.trace.json.gz"
	code, out, errOut := run(t, nil, "analyze", tl, tr)
	if code != 0 || strings.Contains(out, "No findings.") ||
		!strings.Contains(out, "No findings in what could be judged; not judged on 2 of 2 inputs, so nothing is ruled out there:\n  "+tl+": leaks not judged: the timeline has 12 points, too few to judge growth\n  "+tr+": leaks not judged: its trace covers 3 steps (ProfilerStep#N spans), fewer than the 4 needed\n") {
		t.Errorf("table: exit %d, stdout %.1500q, stderr %.300q", code, out, errOut)
	}
	code, out, _ = run(t, nil, "analyze", "-f", "markdown", tl)
	if code != 0 || !strings.Contains(out, "### gpuleak: no findings in what could be judged, **not judged on 1 of 1 input**; in 1 input") ||
		!strings.Contains(out, "Not judged:\n\n- ../testdata/kineto/u48b\\_forward\\_freed\\_12points\\_memory\\_timeline.json: leaks not judged: the timeline has 12 points, too few to judge growth") {
		t.Errorf("markdown: exit %d, stdout %.1500q", code, out)
	}
	code, out, _ = run(t, nil, "analyze", "-f", "json", tl)
	var r struct {
		Findings []any
		Inputs   []struct {
			LeaksUnjudged string `json:"leaks_unjudged"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Findings) != 0 || len(r.Inputs) != 1 || r.Inputs[0].LeaksUnjudged == "" {
		t.Errorf("json: exit %d, err %v, %.1500q", code, err, out)
	}
	// An NVML log all of whose samples were left out (used above the
	// total in each: s37_used_above_total.csv) judged no series either.
	code, out, _ = run(t, nil, "analyze", td+"nvml/s37_used_above_total.csv")
	if code != 0 || !strings.Contains(out, "not judged on 1 of 1 input, so nothing is ruled out there:\n  "+td+"nvml/s37_used_above_total.csv: no sample judged: all 12 samples have used memory above the GPU's total, and were left out\n") {
		t.Errorf("nvml: exit %d, stdout %.1500q", code, out)
	}
	// An input that judged its leaks keeps the plain headline.
	code, out, _ = run(t, nil, "analyze", td+"kineto/h46g_train_clean_8_memory_timeline.json.gz")
	if code != 0 || !strings.Contains(out, "\nNo findings.\n") {
		t.Errorf("judged clean timeline: exit %d, stdout %.1500q", code, out)
	}
}

// TestU48bPynvmlStructPrintouts: a training log that prints
// pynvml.nvmlDeviceGetMemoryInfo(h) for two GPUs each minute, as
// nvidia-ml-py's _PrintableStructure.__str__ writes c_nvmlMemory_t ("%d
// B" each field), behind the logger's date and time, among the program's
// other lines. Before, "unrecognised input format" (exit 2); now GPU 0's
// used memory, 911933440 B at 10:00 and 20 GB more each minute, is read
// as growing (about 316 MiB/s), and GPU 1, flat at 600000000 B (572
// MiB), apart from it by its place at each time. The v2 struct, without
// times, is read too: its used (345440256 B, 329 MiB) leaves the
// reservation out.
func TestU48bPynvmlStructPrintouts(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", td+"nvml/u48b_pynvml_struct_printouts.log")
	for _, w := range []string{"pynvml-text, 4 samples from 2024-05-01 10:00:00 to 10:03:00 UTC", "GPU 0: used memory grows 316 MiB/s", "now 57 GiB", "GPU 1: 572 MiB for 3 min (4 samples): no growth", "names no GPU"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("exit %d, stdout lacks %q: %.2000q, stderr %.300q", code, w, out, errOut)
		}
	}
	// XuehaiPan/nvitop#5: a script on an A100 in MIG mode printed its
	// memory reading (line 5), then nvmlDeviceGetUtilizationRates raised
	// NVMLError_NotSupported (line 13). Was an error (exit 2) saying one
	// query failed; now the reading is a sample (14987362304 B used of
	// 42505273344 B), and the error a warning naming its line.
	code, out, errOut = run(t, nil, "analyze", td+"toolerror/pynvml_notsupported_mig.txt")
	if code != 0 || !strings.Contains(out, "pynvml-text, 1 sample") || !strings.Contains(out, "GPU 0: 14 GiB of 40 GiB used") ||
		!strings.Contains(out, `line 13: pynvml's error "pynvml.NVMLError_NotSupported: Not Supported"`) {
		t.Errorf("nvitop#5: exit %d, stdout %.2000q, stderr %.300q", code, out, errOut)
	}
	dir := t.TempDir()
	// The same log ending in a CUDA OOM traceback: the OOM is the
	// finding, as for a job log that printed nvidia-smi's table first
	// (before the pynvml printouts were read as samples, it was too).
	b, err := os.ReadFile(td + "nvml/u48b_pynvml_struct_printouts.log")
	if err != nil {
		t.Fatal(err)
	}
	oomLog := dir + "/oom.log"
	b = append(b, "Traceback (most recent call last):\n  File \"train.py\", line 120, in <module>\n    loss.backward()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 75.50 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.\n"...)
	if err := os.WriteFile(oomLog, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, nil, "analyze", oomLog)
	if code != 0 || !strings.Contains(out, "pytorch-oom-message") || !strings.Contains(out, "oom        0  2.0 GiB") {
		t.Errorf("printouts then an OOM: exit %d, stdout %.2000q, stderr %.300q", code, out, errOut)
	}
	// Two printouts on each line, without times: GPU 0 and GPU 1 of one
	// instant, each line the next.
	two := dir + "/two.log"
	if err := os.WriteFile(two, []byte("step 1 GPU0 c_nvmlMemory_t(total: 85899345920 B, free: 84987412480 B, used: 911933440 B) GPU1 c_nvmlMemory_t(total: 85899345920 B, free: 85299345920 B, used: 600000000 B)\nstep 2 GPU0 c_nvmlMemory_t(total: 85899345920 B, free: 74987412480 B, used: 10911933440 B) GPU1 c_nvmlMemory_t(total: 85899345920 B, free: 85299345920 B, used: 600000000 B)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, nil, "analyze", two)
	if code != 0 || !strings.Contains(out, "pynvml-text, 2 samples") || !strings.Contains(out, "trend   gpu 0   10 GiB") || !strings.Contains(out, "trend   gpu 1  572 MiB       -    flat") {
		t.Errorf("two a line: exit %d, stdout %.2000q, stderr %.300q", code, out, errOut)
	}
	v2 := dir + "/v2.log"
	if err := os.WriteFile(v2, []byte("mem: c_nvmlMemory_v2_t(version: 33554472 B, total: 85899345920 B, reserved: 566493184 B, free: 84987412480 B, used: 345440256 B)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, nil, "analyze", v2)
	if code != 0 || !strings.Contains(out, "pynvml-text, 1 sample") || !strings.Contains(out, "329 MiB of 79 GiB used") {
		t.Errorf("v2: exit %d, stdout %.2000q, stderr %.300q", code, out, errOut)
	}
}

// TestU48bDateTimesHeaderlessQueryGPU: a loop of "date; nvidia-smi
// --query-gpu=index,memory.total,memory.used,memory.free
// --format=csv,noheader; sleep 300" (README "Header-less CSV", "Time"):
// each output's rows have no timestamp, and date's line before them
// gives their time. Before, the paste with its command was not
// recognised (the date line hid the rows' commas from the sniffer), and
// with --fields the date lines were skipped ("takes no time from it"),
// the rows placed 1 s apart by order; now GPU 0's 1000 -> 9000 MiB is at
// 10:00, 10:05 and 10:10 UTC.
func TestU48bDateTimesHeaderlessQueryGPU(t *testing.T) {
	in := td + "nvml/u48b_date_loop_headerless_query_gpu.log"
	code, out, errOut := run(t, nil, "analyze", in)
	if code != 0 || !strings.Contains(out, "nvidia-smi-query-gpu, 3 samples from 2024-05-02 10:00:00 to 10:10:00 UTC (10 min)") ||
		!strings.Contains(out, "GPU 0: growth from 1000 MiB to 8.8 GiB in 10 min at 10:00:00 UTC") || strings.Contains(out, "skipped") {
		t.Errorf("with its command: exit %d, stdout %.2000q, stderr %.300q", code, out, errOut)
	}
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	bare := t.TempDir() + "/bare.log"
	if err := os.WriteFile(bare, b[bytes.IndexByte(b, '\n')+1:], 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, nil, "analyze", "--fields", "index,memory.total,memory.used,memory.free", bare)
	if code != 0 || !strings.Contains(out, "3 samples from 2024-05-02 10:00:00 to 10:10:00 UTC (10 min)") || strings.Contains(out, "by their order") {
		t.Errorf("--fields: exit %d, stdout %.2000q, stderr %.300q", code, out, errOut)
	}
}

// TestU48bOneFrameSanitizerRecords: compute-sanitizer records whose
// backtrace has one frame. A leak whose one frame is the program's
// (main, leaky.cu:27) names it; a kernel error whose one device frame
// is its "at" line, with a host backtrace, names that kernel (fill). A
// leak whose one frame is cudaMalloc (in leaky, the static runtime),
// followed by the run's summary, was said to be cut ("the log was cut
// before the program's own frames"), which the log shows false: it now
// says the backtrace as printed holds that one runtime frame and the log
// goes on. An API error and the kernel's launch whose one host frame is
// the runtime's or the driver's named no caller and said nothing of it;
// they now say why no site is given. The same leak record at the end of
// a log cut there keeps "the log was cut".
func TestU48bOneFrameSanitizerRecords(t *testing.T) {
	in := td + "sanitizer/u48b_one_frame_records.txt"
	code, out, errOut := run(t, nil, "analyze", in)
	for _, w := range []string{
		"1 allocation (4.0 MiB) of memory at main (leaky.cu:27) was never freed",
		"1 allocation (1.0 MiB) of device memory (cudaMalloc) never freed, site unknown: the backtrace compute-sanitizer printed holds only CUDA runtime, driver, C library or wrapper frames (1 frame: cudaMalloc in leaky), and the log goes on after the record, so it was not cut there",
		`cudaMemcpy failed with cudaErrorInvalidValue ("invalid argument"), called from a site not known (its host backtrace holds only CUDA runtime, driver, C library or wrapper frames (1 frame: cudaMemcpy in libcudart.so.12)`,
		"Invalid __global__ write of size 4 bytes in kernel fill (fill.cu:7)",
		"launched from a site not known (its host backtrace holds only CUDA runtime, driver, C library or wrapper frames (1 frame: cuLaunchKernel in libcuda.so.1)",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("exit %d, stdout lacks %q:\n%.3000s\nstderr %.300q", code, w, out, errOut)
		}
	}
	if strings.Contains(out, "the log was cut") {
		t.Errorf("a whole record said cut: %.3000s", out)
	}
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	cut := t.TempDir() + "/cut.txt"
	if err := os.WriteFile(cut, b[:bytes.Index(b, []byte("========= \n========= LEAK SUMMARY"))], 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ = run(t, nil, "analyze", cut)
	if !strings.Contains(out, "the backtrace ends in leaky with CUDA runtime, driver, C library or wrapper frames only: the log was cut before the program's own frames") {
		t.Errorf("cut: %.3000s", out)
	}
}

// TestU48bDailyLeakSiteSaysWhyNoSite: the daily report's leaks by site
// headed each site without a frame "(no stack)", also where the records
// had stacks and the site is unknown for another reason: leaks only a
// LEAK SUMMARY counts (xmrig/xmrig-nvidia#199's log), a backtrace of
// runtime frames only, cut with the log (cupy/cupy#8904) or whole
// (u48b_one_frame_records.txt). Each is now headed by why.
func TestU48bDailyLeakSiteSaysWhyNoSite(t *testing.T) {
	dir := t.TempDir() + "/job1"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"pub_xmrig_summary_only.txt", "pub_cupy8904_static_cut.txt", "u48b_one_frame_records.txt"} {
		b, err := os.ReadFile(td + "sanitizer/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/"+f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := run(t, nil, "report", dir, "-o", "-", "--format", "markdown")
	if code != 0 || strings.Contains(out, "(no stack)") {
		t.Errorf("exit %d, stderr %.300q, stdout %.4000s", code, errOut, out)
	}
	for _, w := range []string{
		"### site unknown: counted only by the LEAK SUMMARY",
		"### site unknown: the backtrace ends in /home/lilo/anaconda3/lib/python3.11/site-packages/cupy",
		"the log was cut before the program's own frames",
		"### site unknown: the backtrace compute-sanitizer printed holds only CUDA runtime, driver, C library or wrapper frames (1 frame: cudaMalloc in leaky)",
		"### main (leaky.cu:27)",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q: %.4000s", w, out)
		}
	}
	code, out, _ = run(t, nil, "report", dir, "-o", "-", "--format", "json")
	if code != 0 || !strings.Contains(out, `"site_unknown": "counted only by the LEAK SUMMARY`) {
		t.Errorf("json: exit %d, %.3000s", code, out)
	}
}

// TestU48bBaselineLineShowsOldAndNew: with --baseline, a grown finding's
// "baseline:" line said only the old size ("grown from 640 KiB in 5
// allocations"); it now says both and the change, as the gate's line
// does, and the JSON has after_bytes, after_count, delta_bytes and
// delta_percent. The baseline is leak_full.txt with the step() leaks at
// half their size (131,072 bytes each).
func TestU48bBaselineLineShowsOldAndNew(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(td + "sanitizer/leak_full.txt")
	if err != nil {
		t.Fatal(err)
	}
	small := dir + "/small.txt"
	if err := os.WriteFile(small, bytes.ReplaceAll(b, []byte("262,144"), []byte("131,072")), 0o644); err != nil {
		t.Fatal(err)
	}
	base := dir + "/base.json"
	if code, _, errOut := run(t, nil, "analyze", "-q", "--write-baseline", base, small); code != 0 {
		t.Fatalf("write-baseline: exit %d, %s", code, errOut)
	}
	code, out, errOut := run(t, nil, "analyze", "--baseline", base, td+"sanitizer/leak_full.txt")
	if code != 0 || !strings.Contains(out, "   baseline: grown from 640 KiB in 5 allocations to 1.3 MiB in 5 (+640 KiB, +100.0%)\n") {
		t.Errorf("exit %d, stdout %.2000s, stderr %.300q", code, out, errOut)
	}
	_, out, _ = run(t, nil, "analyze", "-f", "json", "--baseline", base, td+"sanitizer/leak_full.txt")
	for _, w := range []string{`"before_bytes": 655360`, `"after_bytes": 1310720`, `"after_count": 5`, `"delta_bytes": 655360`, `"delta_percent": 100`} {
		if !strings.Contains(out, w) {
			t.Errorf("json lacks %s: %.3000s", w, out)
		}
	}
}

// TestU48bMIGProcessesByInstance: XuehaiPan/nvitop#8's Processes box
// lists processes of MIG GPU instances (GI, CI columns). Before, each was
// reported under its GPU only, with a warning that instances were not
// told apart; now each process finding has its instance (mig_gi, mig_ci
// in JSON; "(MIG GI 3 CI 0)" in the table), and processes of no instance
// (GI N/A) none. In a log of 9 tables of a MIG A100 whose GI 3 process
// grows 1000 MiB a minute, neither that process nor the GPU is given a
// time to OOM from the GPU's free memory (52 min before): memory runs out
// in the instance, whose size is not read.
func TestU48bMIGProcessesByInstance(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", "-f", "json", td+"nvml/field/nvitop8_mig_processes.txt")
	if code != 0 {
		t.Fatalf("exit %d, %s", code, errOut)
	}
	var r struct {
		Findings []struct {
			PID   *int64 `json:"pid"`
			MIGGI *int   `json:"mig_gi"`
			MIGCI *int   `json:"mig_ci"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := map[int64][2]int{34965: {3, 0}, 42152: {3, 0}, 46505: {5, 0}, 26294: {3, 0}, 46064: {4, 0}}
	seen := 0
	for _, f := range r.Findings {
		if f.PID == nil {
			continue
		}
		w, ok := want[*f.PID]
		switch {
		case !ok && f.MIGGI != nil:
			t.Errorf("pid %d (GI N/A) given instance %d", *f.PID, *f.MIGGI)
		case ok && (f.MIGGI == nil || f.MIGCI == nil || *f.MIGGI != w[0] || *f.MIGCI != w[1]):
			t.Errorf("pid %d: instance %v %v, want %v", *f.PID, f.MIGGI, f.MIGCI, w)
		case ok:
			seen++
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d MIG processes placed: %.3000s", seen, len(want), out)
	}
	code, out, _ = run(t, nil, "analyze", td+"nvml/u48b_mig_table_growing_instance_process.txt")
	for _, w := range []string{"pid 34965 python (MIG GI 3 CI 0)", "pid 34965 (python) on GPU 1 MIG GI 3 CI 0: used memory grows 17 MiB/s",
		"no time to OOM: the process runs in MIG GI 3 CI 0", "no time to OOM: MIG is on"} {
		if !strings.Contains(out, w) {
			t.Errorf("exit %d, stdout lacks %q: %.3000s", code, w, out)
		}
	}
	if strings.Contains(out, "runs out of memory in about") {
		t.Errorf("a time to OOM from the GPU's free memory: %.3000s", out)
	}
}

// TestU48bMIGProcessesQReports: nvidia-smi -q's Processes entries and
// -q -x's process_info give each process's GPU instance and compute
// instance too ("GPU instance ID : N/A" on the H200 recordings, which run
// without MIG). With them set (2 and 0; 4 and 1), the process finding is
// placed in its instance as the table's is; as recorded (N/A), none.
func TestU48bMIGProcessesQReports(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		src, from, to, name string
		gi, ci              int
	}{
		{"h200_q_process.txt", "        GPU instance ID                   : N/A\n        Compute instance ID               : N/A", "        GPU instance ID                   : 2\n        Compute instance ID               : 0", "q.txt", 2, 0},
		{"h200_q_x_process.xml", "<gpu_instance_id>N/A</gpu_instance_id>\n\t\t\t\t<compute_instance_id>N/A</compute_instance_id>", "<gpu_instance_id>4</gpu_instance_id>\n\t\t\t\t<compute_instance_id>1</compute_instance_id>", "qx.xml", 4, 1},
	} {
		b, err := os.ReadFile(td + "nvml/" + c.src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(c.from)) {
			t.Fatalf("%s: no %q", c.src, c.from)
		}
		for _, mig := range []bool{false, true} {
			in := td + "nvml/" + c.src
			if mig {
				in = dir + "/" + c.name
				if err := os.WriteFile(in, bytes.Replace(b, []byte(c.from), []byte(c.to), 1), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := run(t, nil, "analyze", "-f", "json", in)
			var r struct {
				Findings []struct {
					PID   *int64 `json:"pid"`
					MIGGI *int   `json:"mig_gi"`
					MIGCI *int   `json:"mig_ci"`
				}
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
				t.Fatalf("%s: exit %d, %v, %s", in, code, err, errOut)
			}
			placed := 0
			for _, f := range r.Findings {
				if f.PID == nil {
					continue
				}
				switch {
				case !mig && f.MIGGI != nil:
					t.Errorf("%s: pid %d placed in GI %d without MIG", in, *f.PID, *f.MIGGI)
				case mig && (f.MIGGI == nil || f.MIGCI == nil || *f.MIGGI != c.gi || *f.MIGCI != c.ci):
					t.Errorf("%s: pid %d in %v %v, want GI %d CI %d", in, *f.PID, f.MIGGI, f.MIGCI, c.gi, c.ci)
				default:
					placed++
				}
			}
			if placed == 0 {
				t.Errorf("%s: no process finding: %.2000s", in, out)
			}
		}
	}
}
