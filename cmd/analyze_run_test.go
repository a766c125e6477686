package cmd

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// TestNonPyTorch: native_beside_flat (testdata/README.md) trains with
// PyTorch's reserved memory flat at 117440512 bytes while CuPy mallocs
// 64 MiB every 0.5 s in the same process (30 x 64 MiB = 2013265920 bytes
// over 15 s); nvidia-smi --query-compute-apps shows pid 937 going from 540
// to 2774 MiB. Given together, the snapshot and the log make one
// non-pytorch finding for pid 937 on device 0: the gap at the snapshot's
// end is NVML's used memory then less 117440512, at least the 30 CuPy
// blocks less the ones made after the last sample (within 2 of them), and
// it grew by about 2 GiB over the trace at about 128 MiB/s.
func TestNonPyTorch(t *testing.T) {
	snap := filepath.Join(td, "pytorch", "native_beside_flat.pickle")
	apps := filepath.Join(td, "run", "native_beside_flat_query_apps.csv")
	gpu := filepath.Join(td, "run", "native_beside_flat_query_gpu.csv")
	code, out, errOut := run(t, nil, "analyze", "--format", "json", "--top", "0", "--fail-on", "non-pytorch", snap, apps, gpu)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (non-pytorch found): %s", code, errOut)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var np []report.Finding
	for _, f := range r.Findings {
		if f.Kind == report.KindNonPyTorch {
			np = append(np, f)
		}
	}
	if len(np) != 1 {
		t.Fatalf("%d non-pytorch findings, want 1", len(np))
	}
	f := np[0]
	if f.Device == nil || *f.Device != 0 || f.Site.Function != "pid 937 (python3)" {
		t.Errorf("finding on device %v at %q, want device 0, pid 937", f.Device, f.Site.Function)
	}
	if min, max := int64(28*64<<20), int64(2774<<20-117440512); f.Bytes < min || f.Bytes > max {
		t.Errorf("gap %d bytes, want between %d and %d", f.Bytes, min, max)
	}
	if !strings.Contains(f.Message, "it grew") || !strings.Contains(f.Message, "compute-sanitizer --leak-check full") || !strings.Contains(f.Message, "joined with pid 937") {
		t.Errorf("message does not say the growth, the advice and the join: %s", f.Message)
	}
	// Both growths are measured between the same NVML samples: PyTorch's
	// reserved memory, flat, changed by nothing, and the rest grew at
	// CuPy's 64 MiB per 0.5 s (within one block over the window).
	if !strings.Contains(f.Message, "PyTorch's reserved memory changed +0 B") {
		t.Errorf("PyTorch's flat reserved memory not measured flat: %s", f.Message)
	}
	if m := regexp.MustCompile(`\(([0-9]+) MiB/s\)`).FindStringSubmatch(f.Message); m == nil {
		t.Errorf("no rate: %s", f.Message)
	} else if r, _ := strconv.Atoi(m[1]); r < 120 || r > 136 {
		t.Errorf("%d MiB/s outside PyTorch, want about 128: %s", r, f.Message)
	}

	// The snapshot alone, or with a log of another time, makes none.
	code, out, _ = run(t, nil, "analyze", "--format", "json", snap, filepath.Join(td, "nvml", "query_apps.csv"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	r = report.Report{}
	json.Unmarshal([]byte(out), &r)
	for _, f := range r.Findings {
		if f.Kind == report.KindNonPyTorch {
			t.Errorf("joined with a log of another run: %s", f.Message)
		}
	}
	if w := strings.Join(r.Inputs[0].Warnings, "\n"); !strings.Contains(w, "not joined with the NVML logs") {
		t.Errorf("the snapshot's warnings do not say why it was not joined: %s", w)
	}
}
