package sanitizer

import (
	"strings"
	"testing"
)

// NVIDIA's Compute Sanitizer manual, copied from its rendered HTML
// (testdata/README.md, session 48, f48s), has one space after the prefix
// on every line: the details ("at unaligned_kernel()+0x50", "and is
// inside the nearest allocation ...", "and Read access at ...") sit at a
// record line's indentation. They belong to the record above: each file
// holds as many errors as its summary says (or as its records' first
// lines), each with its kernel. Before, every "at" and "and" line started
// a record of its own ([other]), 6 for the 2 of ERROR SUMMARY, and a
// --fail-on 'sanitizer-errors>2' tripped.
func TestF48sFlattenedDetails(t *testing.T) {
	cases := []struct {
		file    string
		errors  int
		kernels string // each error's kernel, or function when the kernel is not shown
	}{
		{"nvidia_docs_memcheck_demo_release_flattened.txt", 2, "unaligned_kernel out_of_bounds_kernel"},
		{"nvidia_docs_memcheck_demo_debug_flattened_devframe.txt", 2, "unaligned_kernel out_of_bounds_kernel"},
		{"nvidia_docs_initcheck_memset_error_flattened.txt", 1, "vectorAdd"},
		{"nvidia_docs_synccheck_divergent_clone_outline.txt", 1, "myKernel"},
		{"nvidia_docs_racecheck_block_error_508.txt", 1, ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			res := analyzeSan(t, "../../testdata/sanitizer/field/"+c.file, Options{})
			if len(res.Errors) != c.errors {
				t.Fatalf("%d errors, want %d: %+v", len(res.Errors), c.errors, res.Errors)
			}
			var ks []string
			for _, e := range res.Errors {
				if e.Kind == "other" {
					t.Errorf("a detail line read as a record: %q", e.Message)
				}
				k := e.Kernel
				if k == "" {
					k = e.Function
				}
				if k != "" {
					ks = append(ks, k)
				}
			}
			if got := strings.Join(ks, " "); got != c.kernels {
				t.Errorf("kernels %q, want %q", got, c.kernels)
			}
			if w := strings.Join(res.Warnings, "\n"); strings.Contains(w, "records were read") {
				t.Errorf("warnings %q: the summary agrees with the records", w)
			}
		})
	}
}

// compute-sanitizer's racecheck writes a hazard's first line "Warning:
// (Warp Level Programming) Potential RAW hazard detected at __shared__
// 0x8c in block (0,0,0) :" (NVIDIA's manual, quoted without the banner):
// one race whose details are its two threads' accesses and the values.
// Before, the input was refused as no known format: only cuda-memcheck's
// "WARN:(Warp Level Programming)" spelling was known.
func TestF48sRacecheckWarningNoBanner(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/nvidia_docs_racecheck_warp_warning_flattened.txt", Options{})
	if len(res.Errors) != 1 || res.Errors[0].Kind != "race" || len(res.Errors[0].Details) != 3 ||
		!strings.HasPrefix(res.Errors[0].Details[0], "Write Thread (35,0,0) at sumKernel") {
		t.Fatalf("errors %+v: want 1 race with its 3 detail lines", res.Errors)
	}
}

// Pastes cut inside the last line of their last record, the line ending
// added back by the paste or the corpus (testdata/README.md, session 48,
// f48s): the cut text is no name. Before, "Host Frame:libcuda" named the
// leak's site libcuda, "Device Frame:/home/.../build_cuda_debug/_d" and
// "...:119:Load<cub::CUB_200" were the kernels, "H" (of "Host Frame:")
// was a detail, and "llama_backend_init in /home/daniel/code/l" a frame
// named by its cut path.
func TestF48sCutLastLine(t *testing.T) {
	dir := "../../testdata/sanitizer/field/"
	res := analyzeSan(t, dir+"cccl1899_iterator_deprecated_leak_2MiB_snip_cut.txt", Options{})
	if len(res.Sites) != 1 || res.Sites[0].Frame.Name != "" || !strings.Contains(res.Sites[0].Unknown, "cut") {
		t.Errorf("cccl1899: sites %+v: want the site unknown, the log cut", res.Sites)
	}
	for _, f := range []string{"kokkos1958_cudamemcheck_synccheck_warpsync_cut.txt", "cccl2104_initcheck_devframe_nobanner.txt"} {
		res := analyzeSan(t, dir+f, Options{})
		if len(res.Errors) != 1 || res.Errors[0].Kernel != "" || !strings.Contains(res.Errors[0].NoKernel, "ends inside the record's device backtrace") {
			t.Errorf("%s: errors %+v: want the kernel not named, the backtrace cut", f, res.Errors)
		}
	}
	res = analyzeSan(t, dir+"cudanativejl61_synccheck_warp_julia_cut.txt", Options{})
	if len(res.Errors) != 1 || len(res.Errors[0].Details) != 0 {
		t.Errorf("cudanativejl61: errors %+v: want no detail (the cut \"H\" left out)", res.Errors)
	}
	res = analyzeSan(t, dir+"ollama1848_llamacpp_server_cublas_leak_cut.txt", Options{})
	if len(res.Sites) != 1 || res.Sites[0].Frame.Name != "ggml_init_cublas.part.0" {
		t.Fatalf("ollama1848: sites %+v", res.Sites)
	}
	st := res.Sites[0].Stack
	if last := st[len(st)-1]; last.Name != "llama_backend_init" || last.Filename != "" {
		t.Errorf("ollama1848: outermost frame %+v, want llama_backend_init without its cut path", last)
	}
}

// Alibaba HGGC's memcheck writes compute-sanitizer's layout under its own
// prefix, "[HGGC-MC]", its host frames "(main + 0x298) [0x400ef8 ]"
// (no module, a space before the bracket) and its save location "at
// hggcMalloc time" (testdata/README.md, session 48, f48s): 20 bytes
// leaked by main through hggcMalloc. Before, every frame was read whole
// as a function and the site shown was "]".
func TestF48sHGGCLeak(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/hggc_memcheck_aliyun_doc_prefix_leak.txt", Options{})
	if len(res.Sites) != 1 {
		t.Fatalf("sites %+v", res.Sites)
	}
	s := res.Sites[0]
	if s.Bytes != 20 || !strings.HasPrefix(s.Frame.Name, "main@") || s.API != "hggcMalloc" || len(s.Stack) != 3 || !strings.HasPrefix(s.Stack[0].Name, "hggcapiMalloc@") {
		t.Errorf("site %+v: want 20 B at main through hggcMalloc", s)
	}
}

// NVIDIA's NVTX memory-pool sample README (testdata/README.md, session
// 48, f48s): a leak run with --nvtx yes --show-backtrace no, "Leaked 1
// bytes at 0x7f26c3000000 called My allocation", and an initcheck run
// whose one record, "=========  Unused memory in allocation ... called My
// allocation of size 1", sits two spaces in. The leak's NVTX name is its
// only site information, and is kept; the unused-memory record is a
// record, so run 2's ERROR SUMMARY (1 error) agrees. Before, the name was
// dropped, and the record's lines were skipped as "detail lines outside
// a record", run 2 said to hold 0 records.
func TestF48sNVTXNameAndUnusedMemory(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/nvtx_mempool_sample_readme_leak_nobt_initcheck_unused.md", Options{})
	if len(res.Sites) != 1 || res.Sites[0].Name != "My allocation" || res.Sites[0].Bytes != 1 {
		t.Errorf("sites %+v: want 1 B named \"My allocation\"", res.Sites)
	}
	if len(res.Errors) != 1 || res.Errors[0].Kind != "unused-memory" {
		t.Errorf("errors %+v: want 1 unused-memory record", res.Errors)
	}
	w := strings.Join(res.Warnings, "\n")
	if strings.Contains(w, "outside a record") || strings.Contains(w, "0 records") {
		t.Errorf("warnings %q", w)
	}
}

// pytorch/pytorch#139355's paste ends inside its "at" line, in the
// template arguments of a kernel name thousands of bytes long: the name
// before them is whole and stands as the function; the device backtrace
// that would follow is cut, so the kernel is not named, and the cut is
// what the record says.
func TestF48sCutInsideTemplateKeepsName(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/pytorch139355_invalid_global_write_longkernel_cut.txt", Options{})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Function, "distribution_elementwise_grid_stride_kernel") ||
		res.Errors[0].Kernel != "" || !strings.Contains(res.Errors[0].NoKernel, "ends inside the record's device backtrace") {
		t.Errorf("errors %+v", res.Errors)
	}
}

// A racecheck run ends in RACECHECK SUMMARY, not ERROR SUMMARY: a count
// that does not match the records read is said to be the RACECHECK
// SUMMARY's hazards displayed. Before, the warning quoted an "ERROR
// SUMMARY says 1 error" that the log does not hold (NVIDIA's manual's
// racecheck example, whose flattened "and Read access" line was read as
// a second record).
func TestF48sRacecheckSummaryNamed(t *testing.T) {
	log := "========= COMPUTE-SANITIZER\n" +
		"========= Error: Race reported between Write access at k()+0x90 in a.cu:41\n" +
		"=========     and Read access at k()+0x100 in a.cu:51 [508 hazards]\n" +
		"=========\n" +
		"========= Error: Race reported between Write access at k()+0x190 in a.cu:61\n" +
		"=========     and Read access at k()+0x200 in a.cu:71 [2 hazards]\n" +
		"=========\n" +
		"========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
	res := analyzeBytes(t, "race.txt", []byte(log), Options{})
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "RACECHECK SUMMARY says 1 hazard displayed, but 2 records were read") || strings.Contains(w, "ERROR SUMMARY says") {
		t.Errorf("warnings %q", w)
	}
}

// A Host API error whose paste ends inside its host backtrace
// ("Host Frame:cudaMemcpyAsy", NVIDIA/cuda-samples#14) names no caller
// because the log is cut, not because the backtrace holds runtime frames
// only; an initcheck record whose first line has one "=" fewer than its
// details ("======== Uninitialized ..." then "=========     at void
// thrust::...", NVIDIA/cccl#1790) keeps its "at" line, which the paste
// cuts. Before, the first said "holds only CUDA runtime ... frames", and
// the second dropped the "at" line silently as program output.
func TestF48sCutHostBacktraceAndPrefixTypo(t *testing.T) {
	dir := "../../testdata/sanitizer/field/"
	res := analyzeSan(t, dir+"cssamples14_initcheck_managed_cut.txt", Options{})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].NoCaller, "the log ends inside its host backtrace") {
		t.Errorf("cssamples14: errors %+v", res.Errors)
	}
	res = analyzeSan(t, dir+"cccl1790_initcheck_8eq_prefix_typo.txt", Options{})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Function, "_kernel_agent") || res.Errors[0].Kernel != "" ||
		!strings.Contains(res.Errors[0].NoKernel, "ends inside the record's device backtrace") {
		t.Errorf("cccl1790: errors %+v", res.Errors)
	}
}

// Runs are judged apart: the same out-of-bounds read in two runs of one
// program (notes of four runs, testdata/README.md, session 48, f48s) is
// an error of each run, named by it, not one error counted twice.
func TestF48sErrorsOfRunsApart(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/cudait_notes_4runs_managed_leak_racecheck_md.txt", Options{})
	var runs []string
	for _, e := range res.Errors {
		if e.Kind == "memory-access" {
			if e.Count != 1 {
				t.Errorf("error %q counted %d times", e.Message, e.Count)
			}
			runs = append(runs, e.Run)
		}
	}
	if got := strings.Join(runs, ", "); got != "run 1 (line 8), run 2 (line 29)" {
		t.Errorf("memory-access errors of %q, want one of run 1 and one of run 2", got)
	}
}

// Julia's dispatcher, jl_apply_generic in libjulia.so.1, calls the
// program's JIT-compiled code (frames without names here,
// JuliaGPU/CUDAnative.jl#61): it is the interpreter's, as CPython's
// _PyEval_* are, and no launch site. Before, the kernel was "launched
// from jl_apply_generic".
func TestF48sJuliaDispatcherNoSite(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/cudanativejl61_synccheck_warp_julia_cut.txt", Options{})
	if len(res.Errors) != 1 || res.Errors[0].Launch.Name != "" || res.Errors[0].NoCaller == "" {
		t.Errorf("errors %+v: want no launch site", res.Errors)
	}
}
