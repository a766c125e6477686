package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Session 47, helper f47c (testdata/README.md, "OOM recognition and
// counting in text logs (session 47, f47c)").

// f47cOOMs returns the oom findings `oom --format json` gives for
// path, and the exit code of `analyze --fail-on oom` on it.
func f47cOOMs(t *testing.T, path string) (oom []map[string]any, gate int) {
	t.Helper()
	_, out, errOut := run(t, nil, "oom", "--format", "json", path)
	_, fs := findings(t, out)
	gate, _, _ = run(t, nil, "analyze", "-q", "--fail-on", "oom", path)
	_ = errOut
	return ofKind(fs, "oom"), gate
}

// ComfyUI catches the OOM a prompt's node raised, logs "Got an OOM,
// unloading all loaded models.", ends the prompt ("Prompt executed in
// 12.66 seconds") and waits for the next ("got prompt"); the next
// prompt's OOM is logged as "!!! Exception during processing !!!
// Allocation on device " (str(ex) of the same cut cudaMallocAsync
// message). A prompt ran between the two: two OOMs, where gpuleak said
// "OOM 1 of 1". A ComfyUI log of one prompt's OOM prints it twice with
// nothing between (the "!!!" record, then the traceback ending in the
// exception): one OOM.
func TestF47cComfyUISecondPromptOOM(t *testing.T) {
	for _, p := range []string{"f47c_comfy_second_oom_comfyui6176.txt", "f47c_comfy_second_oom_comfyui4880.txt", "h44e_async_device0_cut_comfy4934.txt"} {
		ooms, gate := f47cOOMs(t, pt+"pastes/"+p)
		if len(ooms) != 2 || gate != 1 {
			t.Errorf("%s: %d OOMs, --fail-on oom exit %d; want 2 OOMs, exit 1", p, len(ooms), gate)
		}
	}
	one := "got prompt\n" +
		"2024-09-11 11:51:36,769 - root - ERROR - !!! Exception during processing !!! Allocation on device \n" +
		"2024-09-11 11:51:36,772 - root - ERROR - Traceback (most recent call last):\n" +
		"  File \"C:\\ComfyUI\\execution.py\", line 317, in execute\n" +
		"    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n" +
		"torch.OutOfMemoryError: Allocation on device \n" +
		"\n" +
		"2024-09-11 11:51:36,800 - root - ERROR - Got an OOM, unloading all loaded models.\n" +
		"2024-09-11 11:51:37,000 - root - INFO - Prompt executed in 66.90 seconds\n"
	f := filepath.Join(t.TempDir(), "one_prompt.log")
	if err := os.WriteFile(f, []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	if ooms, _ := f47cOOMs(t, f); len(ooms) != 1 {
		t.Errorf("one prompt's OOM printed twice: %d OOMs, want 1", len(ooms))
	}
}

// ComfyUI's "Error Report" gives the exception's type and text on two
// markdown lines ("- **Exception Type:** torch.OutOfMemoryError", "-
// **Exception Message:** Allocation on device "): an OOM (gpuleak said
// "No out-of-memory error in the inputs" and the gate passed). A report
// pasted whole goes on with its session's log ("## Logs"), where the same
// failure is printed again as it happened, after the prompts before it:
// the report summarises the log's last failure, so report plus a log of
// two prompts' OOMs (4880's) is two OOMs, not three.
func TestF47cComfyUIErrorReport(t *testing.T) {
	report := pt + "pastes/f47c_comfy_error_report_comfyui4852.txt"
	ooms, gate := f47cOOMs(t, report)
	if len(ooms) != 1 || gate != 1 {
		t.Fatalf("report: %d OOMs, exit %d; want 1, exit 1", len(ooms), gate)
	}
	if ooms[0]["exception"] != "torch.OutOfMemoryError" || num(t, ooms[0], "device") != 0 {
		t.Errorf("report's OOM: %v; want torch.OutOfMemoryError on device 0", ooms[0])
	}
	head, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(pt + "pastes/f47c_comfy_second_oom_comfyui4880.txt")
	if err != nil {
		t.Fatal(err)
	}
	whole := string(head) + "## System Information\n## Logs\n" + string(log) + "torch.OutOfMemoryError: Allocation on device \n```\n## Attached Workflow\n"
	f := filepath.Join(t.TempDir(), "report_and_log.md")
	if err := os.WriteFile(f, []byte(whole), 0o644); err != nil {
		t.Fatal(err)
	}
	if ooms, _ := f47cOOMs(t, f); len(ooms) != 2 {
		t.Errorf("report and its log of two prompts' OOMs: %d OOMs, want 2", len(ooms))
	}
}

// A training loop that catches each OOM and logs it ("WARNING:root:CUDA
// out of memory. Tried to allocate 1.72 GiB ...", pytorch/pytorch#31252)
// printed six records; line 3's figures are line 1's. Two things show
// the run went on between them: the tqdm bar drawn on the records' lines
// counts 1/2538 on line 1 and 2/2538 on line 2, and line 2 is another OOM
// (other figures) logged the same way. So six OOMs, where gpuleak merged
// lines 1 and 3 ("no line between that counts the run's progress") and
// said five. Either piece of evidence alone is enough: without the bars
// (the same records, bars cut off) it is still six. Tracebacks printed
// A, B, A are not such records (a summary may list failures again): A
// stays one OOM printed twice there.
func TestF47cCaughtOOMsCounted(t *testing.T) {
	real := pt + "pastes/f47c_caught_bar_counters_pytorch31252.txt"
	if ooms, _ := f47cOOMs(t, real); len(ooms) != 6 {
		t.Errorf("pytorch#31252: %d OOMs, want 6", len(ooms))
	}
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	var noBar []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if i := strings.Index(l, "cached)"); i >= 0 {
			l = l[:i+len("cached)")]
		}
		noBar = append(noBar, l)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "nobar.log")
	if err := os.WriteFile(f, []byte(strings.Join(noBar, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ooms, _ := f47cOOMs(t, f); len(ooms) != 6 {
		t.Errorf("the records without their bars: %d OOMs, want 6", len(ooms))
	}
	tb := func(req string) string {
		return "Traceback (most recent call last):\n  File \"train.py\", line 40, in step\n    out = model(x)\nRuntimeError: CUDA out of memory. Tried to allocate " + req + " (GPU 0; 10.76 GiB total capacity; 4.01 GiB already allocated; 356.00 MiB free; 5.54 GiB cached)\n"
	}
	f = filepath.Join(dir, "tracebacks.log")
	if err := os.WriteFile(f, []byte(tb("1.72 GiB")+tb("1.68 GiB")+tb("1.72 GiB")), 0o644); err != nil {
		t.Fatal(err)
	}
	if ooms, _ := f47cOOMs(t, f); len(ooms) != 2 {
		t.Errorf("tracebacks A, B, A: %d OOMs, want 2", len(ooms))
	}
}

// XLA's message quoted with its status in a code span of a sentence
// (google-deepmind/jaxline#11: "I receive ` RESOURCE_EXHAUSTED: Out of
// memory while trying to allocate 285212672 bytes.` errors") is the
// error quoted, read whole: an OOM asking 285212672 bytes (272.00 MiB),
// as the same words alone on a line are (gpuleak found none).
func TestF47cXLAInCodeSpan(t *testing.T) {
	ooms, gate := f47cOOMs(t, pt+"pastes/f47c_xla_backtick_prose_jaxline11.txt")
	if len(ooms) != 1 || gate != 1 || num(t, ooms[0], "requested_bytes") != 285212672 {
		t.Fatalf("%d OOMs %v, exit %d; want one of 285212672 bytes, exit 1", len(ooms), ooms, gate)
	}
}

// Code that constructs, raises or tests the error is no OOM that
// happened: Lightning-AI/pytorch-lightning#6819's
// "`is_cuda_out_of_memory(RuntimeError('CUDA error: out of memory'))`"
// was "OOM 1 of 1" and tripped the gate. The same for a raise, an
// assignment, a membership test and a call whose string holds a whole
// message. An exception's repr as a log prints it (after a colon, in a
// list, as another exception's argument), a key's value and Rust's Debug
// print of a variant stay OOMs.
func TestF47cCodeIsNoOOM(t *testing.T) {
	ooms, gate := f47cOOMs(t, pt+"pastes/f47c_exception_ctor_lightning6819.txt")
	if len(ooms) != 0 || gate != 0 {
		t.Errorf("lightning#6819: %d OOMs, exit %d; want none, exit 0", len(ooms), gate)
	}
	dir := t.TempDir()
	for i, c := range []struct {
		line string
		n    int
	}{
		{"    raise RuntimeError('CUDA error: out of memory')", 0},
		{"err = RuntimeError(\"CUDA error: out of memory\")", 0},
		{"        if 'CUDA error: out of memory' in str(e):", 0},
		{"    return 'CUDA error: out of memory' in msg", 0},
		{"    ok = ('CUDA error: out of memory' in str(e)) and retry()", 0},
		{"WARNING: caught 'CUDA error: out of memory' in step 5, skipping the batch", 1},
		{"WARNING: caught 'CUDA error: out of memory' in training and skipped the batch", 1},
		{"        if 'CUDA error: out of memory' in str(e) and retries < 3:", 0},
		{"assert is_oom(RuntimeError(\"CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.75 GiB total capacity; 1.00 GiB already allocated; 1.00 GiB free; 13.00 GiB reserved in total by PyTorch)\"))", 0},
		{"Caught: RuntimeError('CUDA error: out of memory')", 1},
		{"Exception(RuntimeError('CUDA error: out of memory'))", 1},
		{"[RuntimeError('CUDA error: out of memory')]", 1},
		{"error='CUDA error: out of memory'", 1},
		{"{'error': 'CUDA error: out of memory'}", 1},
	} {
		f := filepath.Join(dir, fmt.Sprintf("c%d.txt", i))
		if err := os.WriteFile(f, []byte(c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if ooms, _ := f47cOOMs(t, f); len(ooms) != c.n {
			t.Errorf("%q: %d OOMs, want %d", c.line, len(ooms), c.n)
		}
	}
}

// Ray's OutOfMemoryError is its memory monitor killing a task for the
// node's host memory (real-stanford/flingbot#11: "ray.exceptions.
// OutOfMemoryError: Task was killed due to the node running low on
// memory.", 59.49GB / 62.58GB of RAM): no GPU OOM, but a warning on its
// line (10) that says so, where gpuleak said only "no CUDA out-of-memory
// message in it". A task's failure re-raised as
// "RayTaskError(OutOfMemoryError)" alone (chepraid/EasyR1#9, line 4
// first) names a class Ray and torch share: a warning that the name does
// not tell which. With a CUDA message in the text the wrapper is that
// OOM's, and no such warning is given.
func TestF47cRayOOMWarned(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"f47c_ray_host_oom_flingbot11.txt", "line 10: Ray's OutOfMemoryError (ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.): Ray's memory monitor killed a task or actor because the node's host memory (RAM)"},
		{"f47c_ray_taskerror_oom_easyr1_9.txt", "line 4: a Ray task failed with an exception named OutOfMemoryError (RayTaskError(OutOfMemoryError))"},
	} {
		p := pt + "pastes/" + c.file
		code, out, errOut := run(t, nil, "oom", p)
		if code != 0 || !strings.Contains(out+errOut, c.want) {
			t.Errorf("%s: exit %d, output %q; want exit 0 and %q", c.file, code, out+errOut, c.want)
		}
		if ooms, gate := f47cOOMs(t, p); len(ooms) != 0 || gate != 0 {
			t.Errorf("%s: %d OOMs, exit %d; want none, exit 0", c.file, len(ooms), gate)
		}
	}
	f := filepath.Join(t.TempDir(), "ray_task_torch.log")
	text := "(pid=4331) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.91 GiB memory in use. Of the allocated memory 75.12 GiB is allocated by PyTorch, and 2.10 GiB is reserved by PyTorch but unallocated.\n" +
		"ray.exceptions.RayTaskError(OutOfMemoryError): ray::Runner.run() (pid=4331, ip=10.0.0.2)\n"
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "oom", f)
	if code != 0 || strings.Contains(out+errOut, "the name alone does not tell") || !strings.Contains(out, "OOM 1 of 1") {
		t.Errorf("a task's torch OOM re-raised by Ray: exit %d, output %q; want one OOM and no Ray warning", code, out+errOut)
	}
}

// A title quoting the message in parentheses, cut after its request
// (ultralytics/ultralytics#4679: "... runs out of memory (CUDA out of
// memory. Tried to allocate 3.22 GiB)") is the message cut there, its
// request read: 3.22 GiB, as the same words ending a line are
// (ultralytics#843), where gpuleak said "does not parse ... nothing was
// read". 3.22 GiB as PyTorch prints it is [3.215, 3.225) GiB.
func TestF47cRequestInParentheses(t *testing.T) {
	ooms, _ := f47cOOMs(t, pt+"pastes/f47c_paren_request_ultralytics4679.txt")
	if len(ooms) != 1 {
		t.Fatalf("%d OOMs, want 1", len(ooms))
	}
	if got := num(t, ooms[0], "requested_bytes"); got < 3215<<30/1000 || got >= 3225<<30/1000 {
		t.Errorf("requested %d bytes, want 3.22 GiB", got)
	}
}

// CNTK's CUDA checks print the GPU after the status (microsoft/CNTK#1688:
// "CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ; "): device 0,
// where gpuleak gave none.
func TestF47cCNTKDevice(t *testing.T) {
	ooms, _ := f47cOOMs(t, pt+"pastes/f47c_cublas_gpu_eq_cntk1688.txt")
	if len(ooms) != 1 || ooms[0]["device"] == nil || num(t, ooms[0], "device") != 0 {
		t.Fatalf("%d OOMs %v; want one on device 0", len(ooms), ooms)
	}
}

// A blog's sentence that quotes the error ("... your terminal vomits
// RuntimeError: CUDA out of memory. Tried to allocate 2.50 GiB . Cool.")
// does not parse: it was counted as an OOM nothing could be read from,
// and tripped the gate. The exception comes after a sentence's word, not
// a log's prefix: no OOM of this input, and a warning that says it was
// quoted prose that could not be read.
func TestF47cProseQuoteNotCounted(t *testing.T) {
	p := pt + "pastes/f47c_prose_quote_wpnews.txt"
	if ooms, gate := f47cOOMs(t, p); len(ooms) != 0 || gate != 0 {
		t.Errorf("%d OOMs, exit %d; want none, exit 0", len(ooms), gate)
	}
	_, out, errOut := run(t, nil, "oom", p)
	if want := `line 1: a CUDA out-of-memory message quoted in a sentence ("RuntimeError: CUDA out of memory. Tried to allocate 2.50 GiB . Cool. Cool cool cool.") that does not parse`; !strings.Contains(out+errOut, want) {
		t.Errorf("output %q; want %q", out+errOut, want)
	}
}
