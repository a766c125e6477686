package trend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// t45b_gpu_lost_xid79.csv (testdata/README.md, synthetic, shaped like the
// field's 30 s telemetry of an RTX 3090 that fell off the bus): used
// memory rises 30 MiB a sample (1.0 MiB/s) from 6000 MiB for 80 samples
// (00:29:15 to 01:08:45), then 20 rows (10 min) of [GPU is lost]. The
// GPU's last reading, 8365 MiB, is not its memory at the end of
// the log: at 1.0 MiB/s the old code gave about 4.4 h to OOM (capacity
// used + free = 24269 MiB; (24269-8365) MiB / 1 MiB/s = 15904 s) counted
// from 01:08:45, as if the GPU were still there.
func TestHunt45bGPULostStopsBeforeEnd(t *testing.T) {
	got := trends(t, "t45b_gpu_lost_xid79.csv")
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	s := got[0]
	last := time.Date(2026, 9, 14, 1, 8, 45, 0, time.UTC).UnixMicro()
	end := time.Date(2026, 9, 14, 1, 18, 45, 0, time.UTC).UnixMicro()
	if s.Class != Growing || s.Samples != 80 || s.EndUs != last {
		t.Errorf("%s, %d samples to %d; want growing, 80 samples to %d", s.Class, s.Samples, s.EndUs, last)
	}
	if !s.StoppedBeforeEnd || s.LogEndUs != end {
		t.Errorf("StoppedBeforeEnd %v, log end %d; want true, %d", s.StoppedBeforeEnd, s.LogEndUs, end)
	}
	if s.TimeToOOM != nil {
		t.Errorf("time to OOM %.0f s from a GPU no longer sampled; want none", s.TimeToOOM.Seconds)
	}
}

// A GPU sampled to the end of its log is not stopped: the same log
// without its lost rows keeps its time to OOM.
func TestHunt45bGPUSampledToEndKeepsTimeToOOM(t *testing.T) {
	b, err := os.ReadFile("../../testdata/nvml/t45b_gpu_lost_xid79.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	path := filepath.Join(t.TempDir(), "alive.csv")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:81], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	a := NewAnalyzer(Options{})
	readNVML(t, a, path)
	got := a.Finalize().Series
	if len(got) != 1 || got[0].StoppedBeforeEnd || got[0].TimeToOOM == nil {
		t.Fatalf("%d series (stopped %v, time to OOM %v); want one, not stopped, with a time to OOM",
			len(got), len(got) > 0 && got[0].StoppedBeforeEnd, len(got) > 0 && got[0].TimeToOOM != nil)
	}
}

// t45b_eval_spikes_floor_5_cycles.csv (testdata/README.md, synthetic): a
// leak of 1.0 MiB/s from 30 GiB sampled every 10 s for 2.5 h (900
// samples), with an evaluation's 4 GiB on top for the last 100 s of every
// 30 min: five cycles, their floors on the leak's line. The trend is the
// floors' line, 5 points, too few for a time to OOM; the reason said
// "only 5 samples in the trend" beside a series of 900 samples. It counts
// cycles now.
func TestHunt45bFloorTrendCountsCycles(t *testing.T) {
	got := trends(t, "t45b_eval_spikes_floor_5_cycles.csv")
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	s := got[0]
	if s.Class != Growing || !s.RisingFloor || s.Samples != 900 || !within(s.Slope/mib, 1, 0.05) {
		t.Errorf("%s (rising floor %v), %d samples, %.2f MiB/s; want growing on a rising floor, 900, 1.0", s.Class, s.RisingFloor, s.Samples, s.Slope/mib)
	}
	if !strings.Contains(s.NoOOMReason, "only 5 cycles in the trend") {
		t.Errorf("reason %.200q, want it to count 5 cycles", s.NoOOMReason)
	}
}

// A paste of gpustat's text (15:23:57) then nvidia-smi's table (15:24:23)
// holds each output's GPUs as series of their own
// (pub_gpustat130_two_outputs.txt): gpustat's GPUs did not stop 26 s
// before the end of the log; their layout's output ended there. Only a
// GPU that stops before the other GPUs of its own layout, or before its
// input's rows of a one-layout log, has stopped.
func TestHunt45bPasteOfTwoLayoutsNotStopped(t *testing.T) {
	got := trends(t, "pub_gpustat130_two_outputs.txt")
	if len(got) < 5 {
		t.Fatalf("%d series, want gpustat's 4 GPUs and the table's", len(got))
	}
	for _, s := range got {
		if s.StoppedBeforeEnd {
			t.Errorf("GPU %d of %q (%s) taken for stopped at %d, its log ending at %d", s.GPU, s.Host, s.Source, s.EndUs, s.LogEndUs)
		}
	}
}
