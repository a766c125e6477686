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

// pastes is testdata/pytorch/pastes, where the session-48 f48m inputs
// are (testdata/README.md).
const pastes = td + "pytorch/pastes/"

// TestDiffSummaries: gpuleak diff of two memory_summary() tables (pytorch
// #35901's step 0, 659155 KB = 644 MiB allocated; pytorch#116928's, 14356
// MiB allocated) holds no call site on either side: the diff says what
// the tables give (allocated 644 MiB -> 14 GiB) and that no site accounts
// for it, not only "held 0 B -> 0 B".
func TestDiffSummaries(t *testing.T) {
	code, out, errOut := run(t, nil, "diff", pastes+"pytorch35901_step0_summary_kb_mixed_cut.txt", pastes+"pytorch116928_generated_text_then_summary_cut.txt")
	if code != 0 || !strings.Contains(out, "device 0, by each run's last torch.cuda.memory_summary() table: allocated 644 MiB -> 14 GiB (+13 GiB)") ||
		!strings.Contains(out, "allocator statistics name no call site") {
		t.Errorf("exit %d, %s%s; want 0, the tables' allocated memory compared and said to be at no site", code, out, errOut)
	}
	code, out, _ = run(t, nil, "diff", "--format", "json", pastes+"pytorch35901_step0_summary_kb_mixed_cut.txt", pastes+"pytorch116928_generated_text_then_summary_cut.txt")
	if code != 0 || !strings.Contains(out, "allocated 644 MiB -> 14 GiB") {
		t.Errorf("json: exit %d, %s; want the comparison among its warnings", code, out)
	}
}

// TestAsyncSummaryNotMeasured: the cudaMallocAsync backend's
// memory_summary() (testdata/pytorch/pastes/skyreels_comfyui_compose_
// async_summary_after_oom.log: 3116 MiB allocated, 3424 MiB reserved,
// every count 0) prints zeros for what it does not count: not shown as
// "0 bytes free but split" nor "0 OOMs" beside the OOM the log holds.
func TestAsyncSummaryNotMeasured(t *testing.T) {
	f := pastes + "skyreels_comfyui_compose_async_summary_after_oom.log"
	code, out, errOut := run(t, nil, "oom", f)
	if code != 0 || strings.Contains(out, "0 bytes free but split") || strings.Contains(out, "0 OOMs") ||
		!strings.Contains(out, "non-releasable memory, segments, allocations and OOMs not measured (the cudaMallocAsync backend") {
		t.Errorf("exit %d, %s%s", code, out, errOut)
	}
	code, out, _ = run(t, nil, "oom", "--format", "json", f)
	for _, want := range []string{`"cuda_malloc_async": true`, `"inactive_split_bytes": null`, `"num_ooms": null`, `"segments": null`} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("json: exit %d, no %s in %s", code, want, out)
		}
	}
}

// TestSummaryPrintsOfSeparateRuns: parallelformers' README pastes six
// memory_summary() tables of devices 0 and 1 from three setups (cut after
// their Allocated rows): device 1's Tot Alloc falls from 2967 MB (line
// 20) to 1024 B (line 59), device 0's Tot Freed from 251905 KB (line 5)
// to 1024 B (line 44). Cumulative counters never fall in one process, so
// the prints are not one process's over time, and the input's line says
// so instead of "the latest of 3 prints" (whose 0 B stood for the device).
func TestSummaryPrintsOfSeparateRuns(t *testing.T) {
	f := pastes + "parallelformers_readme_summaries_cut_allocated_only.md"
	code, out, errOut := run(t, nil, "oom", f)
	if code != 0 || strings.Contains(out, "the latest of 3 prints") ||
		!strings.Contains(out, "device 1, 3 prints of separate runs or processes (line 59: its total allocated (Allocated memory, Tot Alloc), 1.0 KiB, is below the 2.9 GiB of the print at line 20") ||
		!strings.Contains(out, "device 0, 3 prints of separate runs or processes (line 44: its total freed") {
		t.Errorf("exit %d, %s%s", code, out, errOut)
	}
	code, out, _ = run(t, nil, "analyze", "--format", "json", f)
	if code != 0 || strings.Count(out, `"counters_fell"`) != 2 {
		t.Errorf("json: exit %d, %d counters_fell, want 2 (lines 44 and 59)", code, strings.Count(out, `"counters_fell"`))
	}
}
