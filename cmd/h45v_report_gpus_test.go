package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The daily report's header counts every GPU the inputs name, not only
// the NVML-sampled ones, and says which inputs named the others, as a
// lower bound. Four jobs on hosts not known: A an nvidia-smi log of GPU 0
// (query_gpu.csv); B an OOM message on GPU 0 and a snapshot of device 0;
// C a compute-sanitizer report (it names no device: none counted); D an
// nvidia-smi log of GPU 0 and the OOM message on GPU 0. A's and D's logs
// name one UUID: one GPU. With no host known the jobs may all have run on
// one machine, and B's CUDA device 0 may be that GPU (session 45's tester
// x45b: N reruns on one workstation were N GPUs): at least 1 GPU, the
// sampled one. Without the NVML logs (A and D's CSVs left out), B's and
// D's device 0 are at least 1 GPU, named only by OOM messages and a
// snapshot (it was 2, one a job). With hosts known, each host's GPUs
// count apart (TestReportCountsGPUsSampledByNVML's --group-by case).
func TestReportCountsGPUsOtherInputsName(t *testing.T) {
	root := t.TempDir()
	for dst, src := range map[string]string{
		"A/query_gpu.csv": "nvml/query_gpu.csv", "B/oom_error.txt": "pytorch/oom_error.txt",
		"B/bounded_cache_leak.pickle": "pytorch/bounded_cache_leak.pickle", "C/leak_full.txt": "sanitizer/leak_full.txt",
		"D/query_gpu.csv": "nvml/query_gpu.csv", "D/oom_error.txt": "pytorch/oom_error.txt",
	} {
		b, err := os.ReadFile(td + src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, dst)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := run(t, nil, "report", root, "--format", "json", "-o", "-")
	if code != 0 {
		t.Fatalf("exit %d: %.200q", code, errs)
	}
	var d struct {
		Summary struct {
			Jobs             int      `json:"jobs"`
			GPUs             int      `json:"gpus"`
			OtherDevices     int      `json:"other_devices"`
			OtherDeviceKinds []string `json:"other_device_kinds"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	s := d.Summary
	if s.Jobs != 4 || s.GPUs != 1 || s.OtherDevices != 0 {
		t.Errorf("jobs %d, GPUs %d + %d named by %q; want 4 jobs, 1 + 0", s.Jobs, s.GPUs, s.OtherDevices, s.OtherDeviceKinds)
	}
	for _, p := range []string{"A/query_gpu.csv", "D/query_gpu.csv"} {
		if err := os.Remove(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs = run(t, nil, "report", root, "--format", "md", "-o", "-")
	if want := "**1** GPU (0 sampled by NVML, 1 named only by OOM messages, snapshots)"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, page %.200q, want %q (%.200q)", code, out, want, errs)
	}
}
