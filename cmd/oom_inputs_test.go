package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// s31 holds a tester's recordings (PyTorch 2.11 on an H200, s31; see
// testdata/README.md).
const s31 = pt + "s31/"

// gpuleak oom recognises its inputs as analyze does (finding 4 of s31): a
// profiler trace is read as one, and its [OutOfMemory] event is an OOM,
// not "No out-of-memory error"; the trace's run asked torch.empty(1<<43),
// 2^43 bytes, on a GPU of 139.80 GiB: capacity, the request alone (58
// times the GPU, beyond any GPU: the size computed wrong).
func TestOOMReadsProfilerTraceOOM(t *testing.T) {
	trace := s31 + "oom_8tib_request_trace.json.gz"
	code, out, _ := run(t, nil, "oom", "--format", "json", trace)
	ins, fs := findings(t, out)
	ooms := ofKind(fs, "oom")
	if code != ExitOK || len(ins) != 1 || ins[0]["format"] != "pytorch-profiler-trace" || len(ooms) != 1 {
		t.Fatalf("exit %d, inputs %v, %d OOMs", code, ins, len(ooms))
	}
	if num(t, ooms[0], "requested_bytes") != 1<<43 || !has(causes(ooms[0]), "capacity") {
		t.Errorf("requested %v, causes %v", ooms[0]["requested_bytes"], causes(ooms[0]))
	}
	// The trace's deviceProperties give the GPU's total, 150,109,880,320
	// bytes (139.80 GiB): the event alone compares the request with it.
	if !strings.Contains(out, "more than the GPU's 139.80 GiB total (58 times it)") {
		t.Errorf("the trace's GPU total not used:\n%s", out)
	}
	_, out, _ = run(t, nil, "oom", trace)
	if strings.Contains(out, "No out-of-memory error") || !strings.Contains(out, "([OutOfMemory] event)") || !strings.Contains(out, "most likely computed wrong") {
		t.Errorf("table:\n%s", out)
	}
	// With the message the job printed: one OOM, both sources, the
	// message's GPU total (139.80 GiB).
	code, out, _ = run(t, nil, "oom", "--format", "json", s31+"oom_8tib_request.txt", trace)
	_, fs = findings(t, out)
	ooms = ofKind(fs, "oom")
	if code != ExitOK || len(ooms) != 1 || len(ooms[0]["sources"].([]any)) != 2 || !strings.Contains(out, "139.80 GiB total (58 times it)") {
		t.Errorf("exit %d, %d OOMs:\n%s", code, len(ooms), out)
	}
	// analyze makes the same oom finding, so --fail-on oom trips on it.
	if code, _, errOut := run(t, nil, "analyze", "--fail-on", "oom", trace); code != ExitFindings {
		t.Errorf("analyze --fail-on oom: exit %d %s", code, errOut)
	}
}

// A profiler trace cut short is an unreadable input for oom as for
// analyze: exit 2, the byte offset named, nothing on standard output.
func TestOOMTruncatedTrace(t *testing.T) {
	whole := gunzipped(t, s31+"oom_8tib_request_trace.json.gz")
	cut := filepath.Join(t.TempDir(), "cut.trace.json")
	os.WriteFile(cut, whole[:len(whole)/2], 0o644)
	for _, cmd := range []string{"analyze", "oom"} {
		code, out, errOut := run(t, nil, cmd, cut)
		if code != ExitInput || out != "" || !strings.Contains(errOut, "byte offset") || !strings.Contains(errOut, "ends early") {
			t.Errorf("%s: exit %d %q %q", cmd, code, out, errOut)
		}
	}
}

// Inputs that hold no OOM are named by their real format, not as an OOM
// message: a memory timeline, nvidia-smi's table, a compute-sanitizer leak
// report.
func TestOOMNamesOtherFormats(t *testing.T) {
	for _, c := range []struct{ file, format string }{
		{td + "kineto/profile_keep_outputs_memory_timeline.json", "pytorch-memory-timeline"},
		{s31 + "oom_other_process_nvidia_smi.txt", "nvidia-smi-text"},
		{td + "sanitizer/leak_full.txt", "compute-sanitizer"},
	} {
		code, out, _ := run(t, nil, "oom", "--format", "json", c.file)
		ins, fs := findings(t, out)
		if code != ExitOK || len(ins) != 1 || ins[0]["format"] != c.format || len(ofKind(fs, "oom")) != 0 {
			t.Errorf("%s: exit %d, inputs %v", c.file, code, ins)
		}
	}
}

// nvidia-smi's table given beside the OOM message names the process the
// message lists, as a --query-compute-apps log does. The tester's table
// has pid 571's memory cut to "12339..." (s31 finding 7: such a row is not
// read yet), so the row is written whole here, with the 120.51 GiB
// (123402 MiB) the message gives.
func TestOOMNamesProcessesFromNvidiaSmiTable(t *testing.T) {
	smi, err := os.ReadFile(s31 + "oom_other_process_nvidia_smi.txt")
	if err != nil {
		t.Fatal(err)
	}
	whole := bytes.Replace(smi, []byte("          12339... |"), []byte("          123402MiB |"), 1)
	if bytes.Equal(whole, smi) {
		t.Fatal("the row of pid 571 was not found")
	}
	path := filepath.Join(t.TempDir(), "smi.txt")
	os.WriteFile(path, whole, 0o644)
	code, out, _ := run(t, nil, "oom", s31+"oom_other_process.txt", path)
	if code != ExitOK || !strings.Contains(out, "smi.txt: nvidia-smi-text") || !strings.Contains(out, "process 571, /opt/torch/.venv/bin/python3: 120.51 GiB") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// An input whose kind cannot hold an out-of-memory error (s32 gave oom a
// memory timeline and got "No out-of-memory error in the inputs", as if it
// had been searched): a memory timeline, an NVML sample log, memory_stats()
// JSON, compute-sanitizer's XML. oom reads them (exit 0: the report was
// written), and the headline says that their kind cannot show an OOM,
// each with why; a log without an OOM beside them is the input that was
// searched. JSON carries the same sentence in the input's warnings.
func TestOOMInputsThatCannotShowOne(t *testing.T) {
	for _, c := range []struct{ path, format, says string }{
		{td + "kineto/profile_keep_outputs_memory_timeline.json", "pytorch-memory-timeline", "a memory timeline (export_memory_timeline)"},
		{td + "kineto/profile_keep_outputs_memory_timeline.raw.json.gz", "pytorch-memory-timeline-raw", "a memory timeline (export_memory_timeline)"},
		{td + "nvml/query_gpu.csv", "nvidia-smi-query-gpu", "an NVML log samples memory"},
		{pt + "memory_stats.json", "pytorch-memory-stats", "memory_stats() JSON holds the allocator's counters"},
		{td + "sanitizer/leak_save.xml", "compute-sanitizer-xml", "compute-sanitizer's XML holds the tool's records"},
	} {
		code, out, errOut := run(t, nil, "oom", c.path)
		if code != ExitOK || !strings.Contains(out, "No out-of-memory error can be told from these inputs: none of their kinds can show one.") ||
			!strings.Contains(out, c.says) || strings.Contains(out, "No out-of-memory error in the inputs.") || strings.Count(out, c.says) != 1 {
			t.Errorf("%s: exit %d %q\n%s", c.path, code, errOut, out)
		}
		_, out, _ = run(t, nil, "oom", "--format", "json", c.path)
		ins, _ := findings(t, out)
		if len(ins) != 1 || ins[0]["format"] != c.format || !strings.Contains(out, c.says) {
			t.Errorf("%s: json %v", c.path, ins)
		}
	}
	// Beside a log without an OOM: the log was searched, the timeline
	// cannot show one.
	code, out, _ := run(t, nil, "oom", td+"logs/train_no_oom.log", td+"kineto/profile_keep_outputs_memory_timeline.json")
	if code != ExitOK || !strings.Contains(out, "No out-of-memory error in the inputs that can show one ("+td+"logs/train_no_oom.log); these cannot show one:") ||
		!strings.Contains(out, "a memory timeline (export_memory_timeline)") {
		t.Errorf("log and timeline: exit %d\n%s", code, out)
	}
	// A snapshot without an OOM entry, a log, and nvidia-smi's table
	// (read as a log) can show one: the headline is unchanged.
	for _, p := range []string{pt + "leak_train_loop.pickle", td + "logs/train_no_oom.log"} {
		if _, out, _ := run(t, nil, "oom", p); !strings.Contains(out, "No out-of-memory error in the inputs.") {
			t.Errorf("%s:\n%s", p, out)
		}
	}
}
