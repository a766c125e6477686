package trend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --query-gpu log restarted with another field list and appended to
// (query_gpu_restarted_new_fields.csv: query_gpu.csv's first 200 rows
// without uuid, then its own header and the other 259 rows) is the same
// GPU throughout: one series of all 459 samples, named by the UUID the
// later rows give, judged as the whole log alone is (same class, peak and
// samples), with a warning saying which rows were matched and how. Before,
// the GPU was two series, one per layout, with no note.
func TestLayoutChangeKeepsGPUSeries(t *testing.T) {
	whole := trends(t, "query_gpu.csv")
	a := NewAnalyzer(Options{})
	path := "../../testdata/nvml/query_gpu_restarted_new_fields.csv"
	readNVML(t, a, path)
	res := a.Finalize()
	if len(whole) != 1 || len(res.Series) != 1 {
		t.Fatalf("%d series (the whole log: %d), want 1", len(res.Series), len(whole))
	}
	got, want := res.Series[0], whole[0]
	if got.Samples != 459 || got.Samples != want.Samples || got.Class != want.Class || got.PeakBytes != want.PeakBytes ||
		got.UUID != "GPU-f7fe13ab-e2ff-251e-34e3-f58c08f17771" || !got.HasGPU || got.GPU != 0 {
		t.Errorf("series %s GPU %d %s: %d samples, %s, peak %d; the whole log: %d samples, %s, peak %d",
			got.UUID, got.GPU, got.GPUName, got.Samples, got.Class, got.PeakBytes, want.Samples, want.Class, want.PeakBytes)
	}
	if ws := strings.Join(res.InputWarnings[path], "\n"); !strings.Contains(ws, "read as one series, matched by its index and name") {
		t.Errorf("warnings %q: none says the rows were matched", ws)
	}
}

// The other ways a log names its devices across a change of layout:
// matched where both layouts identify a device the same way (a UUID; an
// index and a name; a process's pid), kept apart where they do not.
func TestLayoutChangeMatching(t *testing.T) {
	const (
		gpuIdx   = "timestamp, index, name, memory.used [MiB]\n"
		gpuUUID  = "timestamp, index, uuid, name, memory.used [MiB]\n"
		gpuOnlyU = "timestamp, uuid, memory.used [MiB]\n"
		gpuOnlyI = "timestamp, index, memory.used [MiB]\n"
	)
	row := func(sec int, fields ...string) string {
		return "2026/12/02 10:00:0" + string(rune('0'+sec)) + ".000, " + strings.Join(fields, ", ") + "\n"
	}
	for _, c := range []struct {
		name, log string
		byName    bool // series named by their GPU name
		// want: each series' identity (uuid or "gpu N" or "pid N") and samples
		want map[string]int
	}{
		{"uuid then index and name", gpuUUID + row(0, "0", "GPU-a", "H100", "10 MiB") + row(1, "0", "GPU-a", "H100", "20 MiB") +
			gpuIdx + row(2, "0", "H100", "30 MiB") + row(3, "0", "H100", "40 MiB"),
			false, map[string]int{"GPU-a": 4}},
		// Two GPUs of one model: each keeps its own rows (by index).
		{"two GPUs, index and name then uuid", gpuIdx + row(0, "0", "H100", "10 MiB") + row(0, "1", "H100", "50 MiB") +
			gpuUUID + row(1, "0", "GPU-a", "H100", "20 MiB") + row(1, "1", "GPU-b", "H100", "60 MiB"),
			false, map[string]int{"GPU-a": 2, "GPU-b": 2}},
		// Another GPU at the same index (its name differs): another series.
		{"same index, other name", gpuIdx + row(0, "0", "H100", "10 MiB") + gpuUUID + row(1, "0", "GPU-a", "A100", "20 MiB"),
			true, map[string]int{"H100": 1, "A100": 1}},
		// The index before, the UUID alone after: nothing to match them by.
		{"index then uuid alone", gpuOnlyI + row(0, "0", "10 MiB") + gpuOnlyU + row(1, "GPU-a", "20 MiB"),
			false, map[string]int{"gpu 0": 1, "GPU-a": 1}},
		// The UUID on both sides: matched by it, whatever else changes.
		{"uuid alone then uuid and index", gpuOnlyU + row(0, "GPU-a", "10 MiB") + gpuUUID + row(1, "0", "GPU-a", "H100", "20 MiB"),
			false, map[string]int{"GPU-a": 2}},
		{"apps: pid then gpu_uuid and pid", "timestamp, pid, process_name, used_gpu_memory [MiB]\n" + row(0, "4242", "python3", "10 MiB") +
			"timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n" + row(1, "GPU-a", "4242", "python3", "20 MiB"),
			false, map[string]int{"pid 4242 python3": 2}},
		// Another process that took the pid (another name): apart.
		{"apps: pid reused by another program", "timestamp, pid, process_name, used_gpu_memory [MiB]\n" + row(0, "4242", "python3", "10 MiB") +
			"timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n" + row(1, "GPU-a", "4242", "nccl-test", "20 MiB"),
			false, map[string]int{"pid 4242 python3": 1, "pid 4242 nccl-test": 1}},
	} {
		p := filepath.Join(t.TempDir(), "gpu.csv")
		if err := os.WriteFile(p, []byte(c.log), 0o644); err != nil {
			t.Fatal(err)
		}
		a := NewAnalyzer(Options{})
		readNVML(t, a, p)
		got := map[string]int{}
		for _, s := range a.Finalize().Series {
			id := s.UUID
			switch {
			case s.HasPID:
				id = fmt.Sprintf("pid %d %s", s.PID, s.Process)
			case c.byName:
				// link (which joins a GPU's series across inputs) gives
				// series of one index the UUID one of them has.
				id = s.GPUName
			case id == "":
				id = fmt.Sprintf("gpu %d", s.GPU)
			}
			if _, two := got[id]; two {
				id += " (a second series)" // one device split in two
			}
			got[id] += s.Samples
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: series %v, want %v", c.name, got, c.want)
			continue
		}
		for id, n := range c.want {
			if got[id] != n {
				t.Errorf("%s: series %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}
