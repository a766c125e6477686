package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A figure a paste typed coarser than PyTorch prints is printed back as
// typed, in the postmortem, the analyze table and Markdown, never with
// the two decimals ("24.00 GiB") it did not have; JSON keeps its bytes
// (24 GiB = 25769803776, as before) and names it in coarse_figures with
// its allowance (half a GiB for "24 GiB").
func TestOOMCoarseFiguresAsTyped(t *testing.T) {
	slicer := pt + "pastes/html_br_link_coarse_slicer32555.txt"
	code, out, errOut := run(t, nil, "oom", slicer)
	if code != 0 || !strings.Contains(out, "  GPU:      24 GiB total; 2.42 GiB free\n") || strings.Contains(out, "24.00 GiB") ||
		!strings.Contains(out, "17 GiB was in use outside PyTorch's allocator") || !strings.Contains(out, "(total 24 GiB ±0.5 GiB)") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = run(t, nil, "oom", "--format", "json", slicer)
	_, fs := findings(t, out)
	if code != 0 || len(fs) != 1 || num(t, fs[0], "device_total_bytes") != 24<<30 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	cf, _ := fs[0]["coarse_figures"].([]any)
	if len(cf) != 1 {
		t.Fatalf("coarse_figures %v", fs[0]["coarse_figures"])
	}
	c := cf[0].(map[string]any)
	if c["figure"] != "device_total_bytes" || c["as_typed"] != "24 GiB" || num(t, c, "bytes") != 24<<30 || num(t, c, "tolerance_bytes") != 1<<29 {
		t.Errorf("coarse figure %v", c)
	}
	// Every figure typed whole: the analyze table's BYTES (the request)
	// is "2 GiB", not humanize's "2.0 GiB", and so is Markdown's (the
	// request, as the text table's, with "?" blocks); the one-line message of the finding gives the sizes as
	// typed, and reserved but unallocated (21 - 20 GiB, ±1 GiB) as "1 GiB".
	f := filepath.Join(t.TempDir(), "retyped.txt")
	msg := "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB (GPU 0; 24 GiB total capacity; 20 GiB already allocated; 1 GiB free; 21 GiB reserved in total by PyTorch)\n"
	if err := os.WriteFile(f, []byte(msg), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ = run(t, nil, "analyze", f)
	if !strings.Contains(out, " 2 GiB ") || strings.Contains(out, "2.0 GiB") || strings.Contains(out, ".00 GiB") {
		t.Errorf("analyze table:\n%s", out)
	}
	_, out, _ = run(t, nil, "analyze", "--format", "markdown", f)
	if !strings.Contains(out, "| 1 | oom | 2 GiB | ? |") || !strings.Contains(out, "oom: 2 GiB requested on GPU 0 (21 GiB reserved, 20 GiB allocated, 1 GiB free on the GPU)") {
		t.Errorf("markdown:\n%s", out)
	}
	_, out, _ = run(t, nil, "oom", f)
	if !strings.Contains(out, "OOM 1 of 1: GPU 0, 2 GiB requested") || !strings.Contains(out, "  PyTorch:  21 GiB reserved, 20 GiB allocated, 1 GiB reserved but unallocated\n") {
		t.Errorf("oom:\n%s", out)
	}
}
