package run

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/parse/nvml"
)

// collect reads a log through parse/nvml into c, in batches of batch rows.
func collect(t *testing.T, c *ProcessCollector, name, log string, batch int) {
	t.Helper()
	r := nvml.NewReader(strings.NewReader(log), name, nvml.WithBatchSize(batch))
	defer r.Release()
	for r.Next() {
		c.Add(name, r.RecordBatch())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestProcessGPUFromUUID: a process logged by GPU UUID alone is placed on
// the index the first row with that UUID and an index gave it (rows of
// that UUID without an index, and later rows with another index, change
// nothing), in one batch or across batches.
func TestProcessGPUFromUUID(t *testing.T) {
	gpus := "timestamp, index, uuid, memory.used [MiB]\n" +
		"2026/11/30 08:00:00.000, [N/A], GPU-b, 10 MiB\n" + // no index: maps nothing
		"2026/11/30 08:00:00.000, 0, GPU-a, 10 MiB\n" +
		"2026/11/30 08:00:01.000, 3, GPU-b, 10 MiB\n" + // GPU-b's first index
		"2026/11/30 08:00:02.000, 1, GPU-a, 10 MiB\n" + // GPU-a keeps 0
		"2026/11/30 08:00:02.000, 5, GPU-b, 10 MiB\n" // GPU-b keeps 3
	apps := "timestamp, gpu_uuid, pid, used_memory [MiB]\n" +
		"2026/11/30 08:00:00.000, GPU-b, 7, 5 MiB\n" +
		"2026/11/30 08:00:00.000, GPU-a, 8, 5 MiB\n"
	for _, batch := range []int{1, 2, 1 << 16} {
		c := NewProcessCollector()
		collect(t, c, "gpus.csv", gpus, batch)
		collect(t, c, "apps.csv", apps, batch)
		got := map[int64]int32{}
		for _, p := range c.Processes() {
			if !p.HasGPU {
				t.Fatalf("batch %d: pid %d has no GPU", batch, p.PID)
			}
			got[p.PID] = p.GPU
		}
		if got[7] != 3 || got[8] != 0 || len(got) != 2 {
			t.Errorf("batch %d: GPUs by pid %v, want 7 on 3 and 8 on 0", batch, got)
		}
	}
}
