package cmd

import (
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Session 44, helper h44f (testdata/README.md, "Session 44, helper h44f").

// export writes a samples row for every GPU and process reading of an
// nvidia-smi table, -q report or gpustat text, as for any NVML log (the
// README's table list: samples, "one per GPU or process per tick").
// Before, those inputs gave findings only: nvml/q_mem_loop.txt of the
// session-44 tester, 120 readings, exported no samples row. The counts
// are parse/nvml's TestFixtures rows for these files: pytorch#910's
// table, two GPUs and no process memory; the H200 recording's -q -d
// MEMORY, one GPU; gpustat#97's line, one GPU and one process.
func TestHunt44fExportSamplesOfTextTables(t *testing.T) {
	for _, c := range []struct {
		file string
		rows int64
	}{
		{"nvml/pub_pytorch910_nvidia_smi.txt", 2},
		{"nvml/leak_exit_nvidia_smi_q_memory.txt", 1},
		{"nvml/pub_gpustat97_line.txt", 2},
	} {
		out := t.TempDir()
		if code, _, errs := run(t, nil, "export", td+c.file, "-o", out, "--to", "arrow"); code != 0 {
			t.Fatalf("%s: exit %d: %.200s", c.file, code, errs)
		}
		var rows int64
		for _, p := range parts(t, out, "samples") {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < r.NumRecords(); i++ {
				rec, err := r.Record(i)
				if err != nil {
					t.Fatal(err)
				}
				rows += rec.NumRows()
			}
			r.Close()
			f.Close()
		}
		if rows != c.rows {
			t.Errorf("%s: %d samples rows exported; want %d", c.file, rows, c.rows)
		}
	}
}
