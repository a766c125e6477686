package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// A GPU replaced during NEW's run (testdata/README.md,
// h46b_gpu_swap_base.csv and h46b_gpu_swap_run.csv): BASE logs GPU 0
// (UUID GPU-1b2c...) at 30000 MiB for an hour; NEW logs index 0 at 30000
// MiB too, GPU-1b2c... for its first 60 samples and GPU-9f8e... for its
// last 60. The two GPUs were never in the host together. Before, the
// diff added both series of index 0: "grown ... 29 GiB -> 59 GiB (2
// series)". Now the earlier GPU's series is left out: one entry, same,
// 30000 MiB on both sides, with a note naming both UUIDs.
func TestDiffGPUReplacedDuringRun(t *testing.T) {
	code, out, errs := run(t, nil, "diff", "--format", "json", td+"nvml/h46b_gpu_swap_base.csv", td+"nvml/h46b_gpu_swap_run.csv")
	if code != 0 {
		t.Fatalf("exit %d: %.300q", code, errs)
	}
	var d struct {
		Entries []struct {
			Status      string
			Note        string
			BeforeBytes int64 `json:"before_bytes"`
			AfterBytes  int64 `json:"after_bytes"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	const want int64 = 30000 << 20
	if len(d.Entries) != 1 {
		t.Fatalf("%d entries, want 1: %.500s", len(d.Entries), out)
	}
	e := d.Entries[0]
	if e.Status != "same" || e.BeforeBytes != want || e.AfterBytes != want {
		t.Errorf("%s, %d -> %d bytes, want same at %d", e.Status, e.BeforeBytes, e.AfterBytes, want)
	}
	if !strings.Contains(e.Note, "replaced during NEW's run (GPU-1b2c3d4e-0000-1111-2222-333344445555 before, GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff at the end)") {
		t.Errorf("note %q", e.Note)
	}
}
