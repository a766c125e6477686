package trend

import "testing"

// numba#5392 (testdata/README.md, session 42): a pasted table whose
// Processes box is cut in pid 8433's row. GPU 0 uses 782 MiB; the two
// whole rows hold 162 + 1 = 163 MiB. Before session 42 the other 619 MiB
// was reported as used by no listed process ("a process NVML cannot see
// ... or memory the driver holds"), though the cut row's process, and
// any after it, may hold it: with the list partial at that time (and the
// driver 418.74 counting its reservation in the used memory) nothing is
// unattributed. The processes' own series are kept.
func TestHunt42CutBoxNotUnattributed(t *testing.T) {
	series := trends(t, "field/numba5392_table_418_procs_row_cut.txt")
	var gpus, procs int
	for _, s := range series {
		if s.HasPID {
			procs++
			continue
		}
		gpus++
		if s.Unattributed != nil {
			t.Errorf("GPU %d: unattributed %+v, want none (the process list is cut)", s.GPU, *s.Unattributed)
		}
	}
	if gpus != 1 || procs != 2 {
		t.Errorf("%d GPU series, %d process series; want 1 and 2", gpus, procs)
	}
}
