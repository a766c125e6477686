package nvml

import (
	"os"
	"testing"

	"github.com/gpuleak/gpuleak/parse"
)

// A log with commas is not a header-less CSV: a tqdm bar (HF Trainer,
// accelerate) has '|', '<' and '=' in its fields; Python logging's
// asctime puts the milliseconds and the message in the field after the
// date (whose timestamp sniffCSV took for nvidia-smi's, reading the log as
// --query-gpu samples). Real header-less rows, from the recorded logs,
// still are.
func TestHunt44dCSVNeedsRows(t *testing.T) {
	for _, c := range []struct {
		head string
		want bool
	}{
		{"  1%|#  | 1/90 [16:59<25:12:38,  1.75it/s, loss=7.13]\n", false},
		{"2024-04-08 13:02:16,577 - INFO - epoch 1, step 100, loss 3.1\n", false},
		// A cut tqdm bar without '|': its rate "1019.75s/it" is no number with a unit.
		{"1/90 [16:59<25:12:38, 1019.75s/it, loss=7.13\n", false},
		// Rows of different widths are no table.
		{"0, 1024 MiB, 81920 MiB\n1, 2048 MiB\n", false},
		{"2026/11/30 09:08:02.276, 0, GPU-3719ad94-3253-f714-5b1b-1cda70808b76, NVIDIA H200, 143771, 0, 143156\n", true},
		{"2004, 2004, 0, 44, [N/A], 0, 0\n", true},
		{"0, 00000000:07:00.0, 535.104.05, 70.00 W, 45 %, 1215 MHz, 1234 MiB\n1, 00000000:08:00.0, 535.104.05, 71.00 W, 0 %, 1215 MHz, 4 MiB\n1, 00000000:08:0", true},
	} {
		if got := LooksLikeCSVRows([]byte(c.head), 3); got != c.want {
			t.Errorf("LooksLikeCSVRows(%.200q) = %v, want %v", c.head, got, c.want)
		}
	}
	for path, want := range map[string]parse.Format{
		"../../testdata/logs/python_logging_commas.log":      parse.FormatUnknown,
		"../../testdata/nvml/query_gpu_noheader_nounits.csv": FormatQueryGPU,
		"../../testdata/nvml/query_apps_noheader.csv":        FormatQueryApps,
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Sniff(b); got != want {
			t.Errorf("Sniff(%s) = %q, want %q", path, got, want)
		}
	}
}
