package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The OOM finding of a program whose own words print its figures
// (CatBoost's "Requested R MB; Free F MB", PaddlePaddle's "A > B", the
// spill manager's "RMM allocation of N", NCCL 1.x's "N byte device
// buffer", TensorRT's "Requested size was B bytes") said "the status has
// no sizes; read beside it", as if they came from other lines; they are
// in the message it quotes. XGBoost's figures, on the lines after its
// status, are still read beside it.
func TestR48bOOMFiguresInItsWords(t *testing.T) {
	for _, tt := range []struct{ file, want string }{
		{"f48o2_catboost_2750_toutofmemory.txt", "; its words give 8.67 GiB requested"},
		{"f48o2_paddle_8992_enforce_allocating.txt", "; its words give 9.79 GiB requested, 1.28 GiB free on the GPU"},
		{"f48o2_dask_cuda_855_spill_on_demand.txt", "; its words give 605.37 MiB requested"},
		{"f48o2_nccl_33_legacy_core_cu_malloc.txt", "; its words give 2.00 MiB requested"},
		{"f48o2_tensorrt_4254_virtualmemorybuffer.txt", "; its words give 15.44 GiB requested"},
		{"f48o2_xgboost_11684_dask_escaped_repr.txt", "; the status has no sizes; read beside it: "},
	} {
		_, out, _ := run(t, nil, "analyze", td+"pytorch/pastes/"+tt.file)
		if !strings.Contains(out, tt.want) {
			t.Errorf("%s: want %q in\n%s", tt.file, tt.want, out)
		}
		if tt.want[2] == 'i' && strings.Contains(out, "read beside it") {
			t.Errorf("%s: figures of its own words said read beside it:\n%s", tt.file, out)
		}
	}
}

// A header-less log whose first field --fields names as text was still
// "unrecognised input format" where that text held a dot or a blank: a
// qualified host name ("gpu07.cluster.local"), a GPU's name ("NVIDIA
// A100-SXM4-80GB", --fields name,...). A header of names (nounits) is
// still no row.
func TestR48bFieldsTextFirstDotsBlanks(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ first, fields, want string }{
		{"gpu07.cluster.local", "host,timestamp,index,memory.used,memory.total", "GPU 0 of gpu07.cluster.local"},
		{"NVIDIA A100-SXM4-80GB", "name,timestamp,index,memory.used,memory.total", "GPU 0 (NVIDIA A100-SXM4-80GB)"},
	} {
		var b strings.Builder
		for i, used := range []int{1000, 1100, 1200} {
			fmt.Fprintf(&b, "%s, 2024/03/14 09:0%d:00.000, 0, %d MiB, 81920 MiB\n", tt.first, i, used)
		}
		in := filepath.Join(dir, "log.csv")
		if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := run(t, nil, "analyze", "--fields", tt.fields, in)
		if code != 0 || !strings.Contains(out, tt.want) {
			t.Errorf("--fields %s: exit %d, want %q\n%s%s", tt.fields, code, tt.want, out, errs)
		}
	}
	in := filepath.Join(dir, "header.csv")
	if err := os.WriteFile(in, []byte("hostname, timestamp, index, memory.used, memory.total\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out, _ := run(t, nil, "analyze", "--fields", "host,timestamp,index,memory.used,memory.total", in); strings.Contains(out, "of hostname") {
		t.Errorf("a header read as a row:\n%s", out)
	}
}
