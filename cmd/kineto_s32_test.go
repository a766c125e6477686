package cmd

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// s31Trace returns the text of s31's trace of torch.empty(1<<43) on an
// H200 (one [OutOfMemory] event: Bytes 8796093022208, Device Type 1,
// Device Id 0), with the event's args edited by the replacer.
func s31Trace(t *testing.T, edit *strings.Replacer) string {
	t.Helper()
	whole := gunzipped(t, s31+"oom_8tib_request_trace.json.gz")
	const event = `"Bytes": 8796093022208, "Device Id": 0, "Device Type": 1`
	if bytes.Count(whole, []byte(event)) != 1 {
		t.Fatalf("the trace's [OutOfMemory] event is not as expected")
	}
	p := filepath.Join(t.TempDir(), "oom.trace.json")
	if err := os.WriteFile(p, []byte(edit.Replace(string(whole))), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func warningsOf(in map[string]any) string {
	var ws []string
	for _, w := range in["warnings"].([]any) {
		ws = append(ws, w.(string))
	}
	return strings.Join(ws, "\n")
}

// A trace's [OutOfMemory] event is said once, as its oom finding: no
// warning repeats it (s32). One whose Bytes is negative (s32's oom_neg)
// has an unknown request everywhere: the finding's is null, "an
// allocation failed", and the one warning says why, not "0 B requested".
func TestTraceOOMSaidOnce(t *testing.T) {
	for _, c := range []struct {
		name, from, to string
		warn           string // "" for none about the event
	}{
		{"as recorded", "", "", ""},
		{"negative bytes", `"Bytes": 8796093022208`, `"Bytes": -1`, "device 0: an [OutOfMemory] event's Bytes is -1, not a size: the request that failed is unknown"},
	} {
		trace := s31Trace(t, strings.NewReplacer(c.from, c.to))
		code, out, errOut := run(t, nil, "analyze", "--format", "json", trace)
		ins, fs := findings(t, out)
		ooms := ofKind(fs, "oom")
		if code != ExitOK || len(ooms) != 1 {
			t.Fatalf("%s: exit %d, %d OOMs: %s", c.name, code, len(ooms), errOut)
		}
		ws := warningsOf(ins[0])
		if strings.Contains(ws, "an [OutOfMemory] event:") || strings.Contains(ws, "0 B requested") {
			t.Errorf("%s: a warning repeats the finding:\n%s", c.name, ws)
		}
		if c.warn != "" && !strings.Contains(ws, c.warn) {
			t.Errorf("%s: warnings lack %q:\n%s", c.name, c.warn, ws)
		}
		if c.warn != "" && (ooms[0]["requested_bytes"] != nil || !strings.HasPrefix(ooms[0]["message"].(string), "oom: an allocation failed on GPU 0")) {
			t.Errorf("%s: requested %v, message %q; want unknown", c.name, ooms[0]["requested_bytes"], ooms[0]["message"])
		}
	}
}

// An [OutOfMemory] event of the CPU (Device Type 0, Device Id -1: s32's
// oom_cpu) is PyTorch's CPU allocator failing to get host memory, not a
// GPU's OOM: its finding says so, has no device ("cpu"), no GPU total and
// no GPU cause, and nothing says "device -1" or "any GPU".
func TestTraceOOMOfHostMemory(t *testing.T) {
	trace := s31Trace(t, strings.NewReplacer(`"Device Id": 0, "Device Type": 1, "finished"`, `"Device Id": -1, "Device Type": 0, "finished"`))
	code, out, errOut := run(t, nil, "oom", "--format", "json", trace)
	_, fs := findings(t, out)
	ooms := ofKind(fs, "oom")
	if code != ExitOK || len(ooms) != 1 {
		t.Fatalf("exit %d, %d OOMs: %s", code, len(ooms), errOut)
	}
	o := ooms[0]
	msg, _ := o["message"].(string)
	if o["device"] != nil || o["device_type"] != "cpu" || len(causes(o)) != 0 || o["device_total_bytes"] != nil ||
		num(t, o, "requested_bytes") != 1<<43 || !strings.Contains(msg, "host memory") || !strings.Contains(msg, "not a GPU out-of-memory error") {
		t.Errorf("finding %v", o)
	}
	for _, args := range [][]string{{"oom", trace}, {"analyze", trace}} {
		_, out, _ := run(t, nil, args...)
		if strings.Contains(out, "device -1") || strings.Contains(out, "any GPU") || strings.Contains(out, "capacity") || strings.Contains(out, "GPU:") {
			t.Errorf("%s: GPU words for a host OOM:\n%s", args[0], out)
		}
		if args[0] == "oom" && !strings.Contains(out, "OOM 1 of 1: host memory (CPU), 8192.00 GiB requested") {
			t.Errorf("oom:\n%s", out)
		}
		if args[0] == "analyze" && !strings.Contains(out, " 1  oom      cpu  8.0 TiB") {
			t.Errorf("analyze:\n%s", out)
		}
	}
}

// A trace of an XPU names its devices as PyTorch does (s31's XPU trace,
// Device Type 12): "device xpu:0" on the input's line and in warnings,
// xpu:0 in the DEVICE column, device_type "xpu" in JSON; an XPU event's
// OOM is "on xpu:0". Of its 173 MiB active (Total Allocated), 161 MiB
// was allocated before profiling: the 12 allocations the trace left live
// hold the other 12 MiB.
func TestXPUDeviceNames(t *testing.T) {
	code, out, errOut := run(t, nil, "analyze", td+"kineto/s31_trace_xpu_devtype12.json.gz")
	if code != ExitOK || !strings.Contains(out, "pytorch-profiler-trace; device xpu:0: 173 MiB active (12 MiB of it in the 12 allocations the trace left live)") ||
		!strings.Contains(out, " 1  leak   xpu:0  12 MiB") || !strings.Contains(out, ": device xpu:0: 161 MiB was allocated before profiling") ||
		strings.Contains(out, "device 0") {
		t.Errorf("exit %d %s:\n%s", code, errOut, out)
	}
	_, out, _ = run(t, nil, "analyze", "--format", "json", td+"kineto/s31_trace_xpu_devtype12.json.gz")
	ins, fs := findings(t, out)
	if d := ins[0]["devices"].([]any)[0].(map[string]any); d["device_type"] != "xpu" || fs[0]["device_type"] != "xpu" {
		t.Errorf("device %v, finding %v", d, fs[0])
	}
	// CUDA devices say nothing new.
	_, out, _ = run(t, nil, "analyze", "--format", "json", td+"kineto/profile_keep_outputs_trace.json.gz")
	if strings.Contains(out, "device_type") {
		t.Errorf("a CUDA trace has a device_type:\n%s", out)
	}
	trace := s31Trace(t, strings.NewReplacer(`"Device Id": 0, "Device Type": 1, "finished"`, `"Device Id": 0, "Device Type": 12, "finished"`))
	_, out, _ = run(t, nil, "oom", trace)
	if !strings.Contains(out, "OOM 1 of 1: xpu:0, 8192.00 GiB requested") {
		t.Errorf("XPU event:\n%s", out)
	}
}

// Two processes' traces merged into one file (s32's twopid): pid 100's
// 1 MiB a step is a leak judged across its own ProfilerStep#N spans, and
// the output says whose: each device line and the finding name the
// process, and JSON carries its pid.
func TestMergedTraceNamesProcess(t *testing.T) {
	trace := td + "kineto/s32_twopid.json"
	code, out, errOut := run(t, nil, "analyze", trace)
	for _, want := range []string{
		"process 100, device 0: 10 MiB active in 10 blocks, 1.0 GiB reserved, 10 trace entries, 10 iterations (ProfilerStep#N spans); process 200, device 0: 0 B active in 0 blocks",
		" 1  leak       0  10 MiB      10  10 kept  aten::clone (process 100)",
		"1. leak: in process 100, memory allocated from C++ with no Python caller, in aten::clone keeps growing across iterations: its live memory at the start of an iteration grew in 9 of 9 iterations (ProfilerStep#N spans)",
	} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("exit %d %s: no %q in:\n%s", code, errOut, want, out)
		}
	}
	_, out, _ = run(t, nil, "analyze", "--format", "json", trace)
	ins, fs := findings(t, out)
	if len(fs) != 1 || fs[0]["kind"] != "leak" || num(t, fs[0], "pid") != 100 || len(ins[0]["devices"].([]any)) != 2 {
		t.Errorf("findings %v, inputs %v", fs, ins)
	}
}

// A file that is not a whole trace says what it is (s32): a trace's
// header without traceEvents, whatever its header keys; a trace cut in
// its header, truncated at its byte offset, as one cut in its events is.
// All exit 2. A whole trace whose traceEvents is empty, with or without
// deviceProperties, is read since h43b: exit 0, its warning saying it
// holds no events (TestEmptyTraceJudgesNothing).
func TestTraceWithoutEvents(t *testing.T) {
	dir := t.TempDir()
	header := `{"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "pg_config": [{"pg_name": "0", "ranks": [` + strings.Repeat("1, ", 30000) + `2]}]}`
	for _, c := range []struct {
		name, doc, want string
	}{
		{"devprops", `{"deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320}], "foo": [1, 2, 3]}`,
			"no traceEvents member: the file holds a PyTorch profiler trace's header (deviceProperties) and no events"},
		{"distinfo", header + `, "results": {"loss": [1, 2]}}`,
			"no traceEvents member: the file holds a PyTorch profiler trace's header (distributedInfo) and no events"},
		{"cut in header", header[:70980], `byte offset 70980: the trace ends early (truncated?), inside its header, in "distributedInfo", before traceEvents`},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
		if err := os.WriteFile(p, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"analyze", "oom"} {
			code, _, errOut := run(t, nil, cmd, p)
			if code != ExitInput || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "profile_memory=True;") || strings.Contains(errOut, "not a Chrome trace") {
				t.Errorf("%s, %s: exit %d %q; want 2, %q", c.name, cmd, code, errOut, c.want)
			}
		}
	}
}

// gunzipped returns the unpacked bytes of the gzipped file at path.
func gunzipped(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return whole
}
