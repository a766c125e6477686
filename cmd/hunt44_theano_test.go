package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// Theano's messages (testdata/README.md, "Session 44") were "no CUDA
// out-of-memory message" (exit 0, no finding). Theano/Theano#1814's CUDA
// back-end message gives the request, 26214400 bytes, and the driver's
// 19365888 free of 1073414144 total: an OOM with those figures, no cause
// (the driver's figures do not split Theano's memory from others'), a
// note that says so. Of a request over the GPU's total (synthetic: the
// same words with 2000000000 bytes asked of 1073414144), the cause is
// capacity. salgan#37's libgpuarray status is one OOM named Theano's.
func TestHunt44TheanoOOMs(t *testing.T) {
	p := td + "pytorch/pastes/"
	code, out, errOut := run(t, nil, "oom", "--format", "json", p+"theano_cudandarray_driver_report_theano1814.txt")
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Findings) != 1 {
		t.Fatalf("theano1814: exit %d, stderr %.200q, %v, %d findings", code, errOut, err, len(r.Findings))
	}
	f := r.Findings[0]
	if f.RequestedBytes == nil || *f.RequestedBytes != 26214400 || f.DeviceFreeBytes == nil || *f.DeviceFreeBytes != 19365888 ||
		f.DeviceTotalBytes == nil || *f.DeviceTotalBytes != 1073414144 || len(f.Cause) != 0 {
		t.Errorf("theano1814: %.200q", out)
	}
	if !strings.Contains(strings.Join(f.Notes, " "), "the driver then reported 18.47 MiB free of 1023.69 MiB") {
		t.Errorf("theano1814 notes: %.200q", f.Notes)
	}

	big := filepath.Join(t.TempDir(), "big.log")
	if err := os.WriteFile(big, []byte("MemoryError: Error allocating 2000000000 bytes of device memory (out of memory). Driver report 100 bytes free and 1073414144 bytes total\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ = run(t, nil, "oom", "--format", "json", big)
	r = report.Report{}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Findings) != 1 || len(r.Findings[0].Cause) != 1 || r.Findings[0].Cause[0] != "capacity" {
		t.Errorf("request over total: %.200q; want cause capacity", out)
	}

	_, out, _ = run(t, nil, "oom", "--format", "json", p+"theano_gpudata_alloc_salgan37.txt")
	r = report.Report{}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Findings) != 1 || len(r.Inputs) != 1 || !slices.Equal(r.Inputs[0].OOMPrinters, []string{"Theano"}) {
		t.Errorf("salgan37: %.200q; want 1 OOM, printed by Theano", out)
	}
}
