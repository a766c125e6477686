package cmd

import (
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
