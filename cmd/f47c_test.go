package cmd

import (
	"os"
	"path/filepath"
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
