package cmd

import (
	"strings"
	"testing"
)

// TestKinetoNothingProfiled: a trace recorded with profile_memory whose
// only events are CUDA start-up calls (cudaGetDeviceCount,
// cudaGetDeviceProperties), the profiler's own marks and flow arrows
// ("Op count": 0, no ProfilerStep#N; testdata/README.md, session 48
// f48m) is not a trace of too few steps: nothing ran under the
// profiler. Exit 2, said so, and no advice to profile more steps.
func TestKinetoNothingProfiled(t *testing.T) {
	code, _, errOut := run(t, nil, "analyze", td+"kineto/particle_transformer_profiler_trace_profile_memory_no_events.json")
	if code != 2 || !strings.Contains(errOut, "nothing ran under the profiler") || !strings.Contains(errOut, "7 cuda_runtime") ||
		strings.Contains(errOut, "too few") || strings.Contains(errOut, "profile more steps") {
		t.Errorf("exit %d, %q; want 2, nothing ran under the profiler, its 7 CUDA runtime calls named, no 'too few steps'", code, errOut)
	}
}
