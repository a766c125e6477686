package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A GPU replaced during the run, with a pmon log beside it
// (testdata/README.md, u47b_gpu_swap_pmon.txt): h46b_gpu_swap_run.csv
// logs index 0 as GPU-1b2c... from 10:00:00 to 10:29:30 and as
// GPU-9f8e... from 10:30:00 to 10:59:30; pmon (index only, no UUID) logs
// pid 4100 growing 100 MiB a sample from 10:00:00 to 10:29:30, then pid
// 5200 flat from 10:30:00. pid 4100 ran on the first GPU, pid 5200 on its
// successor: their samples overlap only that GPU's. Before, the pmon log
// (its span the whole hour) was linked by index to both UUIDs, joining
// the two GPUs in one group, and both processes were named GPU-9f8e...:
// `gpuleak report` listed the first GPU's growing process under its
// successor (whose worst trend then read "growing"). Now each process is
// its own GPU's, in trend's JSON and in the daily report, and diff's
// rule holds: the GPUs are never one. The first GPU's finding, whose
// samples stop half an hour before the log's end, named what might have
// happened (a lost GPU, a replacement, a host's logging stopped) though
// the log shows its successor: it names the successor now.
func TestU47bSwapProcessesStayWithTheirGPU(t *testing.T) {
	const (
		first = "GPU-1b2c3d4e-0000-1111-2222-333344445555"
		next  = "GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff"
	)
	code, out, errs := run(t, nil, "trend", "--format", "json", td+"nvml/h46b_gpu_swap_run.csv", td+"nvml/u47b_gpu_swap_pmon.txt")
	if code != 0 {
		t.Fatalf("trend exit %d: %.300q", code, errs)
	}
	var r struct {
		Findings []struct {
			PID        *int64 `json:"pid"`
			UUID       string `json:"gpu_uuid"`
			ReplacedBy string `json:"replaced_by_gpu_uuid"`
			Message    string `json:"message"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	// The first GPU's samples stop at 10:29:30; the log shows the second
	// at index 0 from 10:30:00: its finding names it (the CSV names no
	// host, so an appended log of another host is not ruled out), and
	// the second GPU, logged to the end, names none.
	for _, f := range r.Findings {
		if f.PID != nil {
			continue
		}
		wantBy := ""
		if f.UUID == first {
			wantBy = next
			if m := "another GPU, " + next + ", is logged at its index from 10:30:00 UTC (the GPU replaced, or another host's log appended"; !strings.Contains(f.Message, m) {
				t.Errorf("trend: %s's message lacks %q: %s", first, m, f.Message)
			}
		}
		if f.ReplacedBy != wantBy {
			t.Errorf("trend: %s replaced_by_gpu_uuid %q, want %q", f.UUID, f.ReplacedBy, wantBy)
		}
	}
	want := map[int64]string{4100: first, 5200: next}
	seen := 0
	for _, f := range r.Findings {
		if f.PID == nil {
			continue
		}
		seen++
		if f.UUID != want[*f.PID] {
			t.Errorf("trend: pid %d on %s, want %s", *f.PID, f.UUID, want[*f.PID])
		}
	}
	if seen != 2 {
		t.Errorf("trend: %d processes, want 2: %.500s", seen, out)
	}

	dir := t.TempDir()
	for _, f := range []string{"h46b_gpu_swap_run.csv", "u47b_gpu_swap_pmon.txt"} {
		b, err := os.ReadFile(td + "nvml/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "job1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "job1", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs = run(t, nil, "report", "--format", "json", "-o", "-", dir)
	if code != 0 {
		t.Fatalf("report exit %d: %.300q", code, errs)
	}
	var d struct {
		GPUs []struct {
			GPU    string `json:"gpu"`
			Class  string `json:"class"`
			Series []struct {
				PID *int64 `json:"pid"`
			} `json:"series"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.GPUs) != 2 {
		t.Fatalf("report: %d GPUs, want 2", len(d.GPUs))
	}
	for _, g := range d.GPUs {
		var pids []int64
		for _, s := range g.Series {
			if s.PID != nil {
				pids = append(pids, *s.PID)
			}
		}
		wantPID, wantClass := int64(4100), "growing"
		if g.GPU == next {
			wantPID, wantClass = 5200, "flat"
		}
		if len(pids) != 1 || pids[0] != wantPID || g.Class != wantClass {
			t.Errorf("report: %s holds processes %v, class %s; want [%d], %s", g.GPU, pids, g.Class, wantPID, wantClass)
		}
	}
}
