package sanitizer

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestHunt41Field reads the sanitizer pastes hunted in session 41
// (testdata/README.md, "Sanitizer and NVML pastes hunted in session 41").
// What each must give is read off its text, record by record.
func TestHunt41Field(t *testing.T) {
	dir := "../../testdata/sanitizer/field/"
	cases := []struct {
		file   string
		kinds  string // the kinds of the records, in order
		kernel string // in the first record's kernel ("": not checked)
		warn   string // a warning that must be there
	}{
		// cuda-memcheck racecheck's hazard report at ERROR severity,
		// without the "(Warp Level Programming)" of the WARN form: "ERROR:
		// Potential WAW hazard detected at __shared__ 0xe7" (hypre#584).
		// Was refused as no known format.
		{"hypre584_racecheck_waw_cusparse.txt", "race", "", ""},
		// cuda-memcheck racecheck's analysis report with the severity in
		// capitals, "WARN: Race reported between" (raft#676). Was refused.
		{"raft676_racecheck_warn_mangled_cut.txt", "race", "", ""},
		// Markdown took __global__'s underscores and the details'
		// indentation (Detectron#955): "========= Invalid global read of
		// size 4" then "========= at 0x000000f0 in void caffe2::...". Was
		// refused; read as one record, the "at" line its kernel.
		{"detectron955_markdown_ate_underscores.txt", "memory-access",
			"caffe2::_GLOBAL__N__49_tmpxft_00005a55_00000000_6_elementwise_op_cpp1_ii_926916d3::binary_add_kernel<bool=0, float, float>", ""},
		// The excerpt starts with two "and Read access" lines of a race
		// whose first line is not in it (cudf#15216), then three races,
		// the last cut: three records, and a warning that lines were
		// skipped (they were taken for program output in silence).
		{"cudf15216_racecheck_head_cut_off.txt", "race race race", "", "line 1: detail lines outside a record were skipped"},
		// Read right before and after (regression inputs): three invalid
		// reads with the backtraces elided by "..." (concrete-core#332);
		// initcheck in cuda-memcheck's layout (ndzip#2); a read past an
		// allocation, cut in its backtrace line (HeCBench#112); nested
		// device frames (mujoco_warp#664); program output first (cuvs#1231).
		{"concretecore332_invalid_read_elided_cut.txt", "memory-access memory-access memory-access", "", ""},
		{"ndzip2_initcheck_old_layout_cut.txt", "uninitialized", "", ""},
		{"hecbench112_invalid_read_nearest_alloc_cut.txt", "memory-access", "col_kernel", ""},
		{"mujocowarp664_invalid_read_device_frames_nested.txt", "memory-access", "", ""},
		{"cuvs1231_program_output_then_invalid_read_cut.txt", "memory-access", "", ""},
		// API errors read right: after the program's line inside the run
		// (cuCollections#538), two with JNI frames and an empty module
		// (cudf-spark-jni#2039), lines padded with spaces (legion#1655),
		// and frames wrapped by an editor (kotekan#1234,
		// TestHunt41WrappedFrameLines).
		{"cucollections538_api_error_catch2_cut.txt", "api", "", ""},
		{"cudfsparkjni2039_two_api_errors_jni_cut.txt", "api api", "", ""},
		{"legion1655_api_error_trailing_spaces_cut.txt", "api", "", ""},
		{"kotekan1234_api_error_wrapped_frames_cut.txt", "api", "", ""},
		// A CI log indented two spaces, the backtrace elided by the
		// reporter ("=========   ..."), then ERROR SUMMARY: 1 error
		// (cccl#8288): one record, the summary agreeing.
		{"cccl8288_indented_elided_summary.txt", "memory-access", "cp_async_bulk_cp_mask", ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(dir + c.file)
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := Sniff(data); !ok || f != FormatText {
				t.Fatalf("Sniff = %v, %v: want a text report", f, ok)
			}
			tb, meta, err := read(t, c.file, data, false)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, r := range tb.records {
				kinds = append(kinds, r["kind"])
			}
			if got := strings.Join(kinds, " "); got != c.kinds {
				t.Errorf("kinds %q, want %q", got, c.kinds)
			}
			if strings.HasPrefix(c.file, "detectron955") && tb.records[0]["size"] != "4" {
				t.Errorf("size %q, want 4 (\"of size 4\")", tb.records[0]["size"])
			}
			if c.kernel != "" && (len(tb.records) == 0 || !strings.Contains(tb.records[0]["kernel"], c.kernel)) {
				t.Errorf("records %v: want the first's kernel to hold %q", tb.records, c.kernel)
			}
			w := strings.Join(meta.Warnings.Strings(), "\n")
			if c.warn != "" && !strings.Contains(w, c.warn) {
				t.Errorf("warnings %q: want one with %q", w, c.warn)
			}
			if c.warn == "" && strings.Contains(w, "outside a record") {
				t.Errorf("warnings %q: no record is cut at the start", w)
			}
		})
	}
}

// The other severities and spaces of the same records, and the forms
// Markdown leaves of the other memory spaces: each line is a record of
// its kind, one per line (written for the test, in the layouts above).
func TestHunt41RecordStarts(t *testing.T) {
	for _, c := range []struct{ in, kinds string }{
		{"========= ERROR: Race reported between Write access at 0x10 in k()\n=========     and Read access at 0x20 in k() [2 hazards]\n", "race"},
		{"========= INFO:(Identical data writes) Potential WAW hazard detected at __shared__ 0x0 in block (0, 0, 0) :\n=========     Write Thread (1, 0, 0) at 0x10 in k\n", "race"},
		{"========= WARN: Potential WAR hazard detected at __shared__ 0x4 in block (1, 0, 0) :\n=========     Read Thread (0, 0, 0) at 0x20 in k\n", "race"},
		{"========= Invalid shared write of size 4\n========= at 0x00000010 in k(float*)\n========= by thread (0,0,0) in block (0,0,0)\n", "memory-access"},
		{"========= Uninitialized global memory read of size 4\n========= at 0x00000010 in k(float*)\n", "uninitialized"},
	} {
		data := []byte(c.in)
		if f, ok := Sniff(data); !ok || f != FormatText {
			t.Errorf("%q: Sniff = %v, %v", c.in, f, ok)
			continue
		}
		tb, _, err := read(t, "in.txt", data, false)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		var kinds []string
		for _, r := range tb.records {
			kinds = append(kinds, r["kind"])
		}
		if got := strings.Join(kinds, " "); got != c.kinds {
			t.Errorf("%q: kinds %q, want %q", c.in, got, c.kinds)
		}
		if c.kinds != "race" && (len(tb.records) != 1 || tb.records[0]["size"] != "4") {
			t.Errorf("%q: records %v, want one of size 4", c.in, tb.records)
		}
	}
}

// A tool line ending in a backslash goes on in the next lines that lack
// the prefix (kotekan#1234, pasted from an editor that wraps long lines
// so): the frame "cudaInputData::cudaInputData(... std::all\" +
// "ocator<char> > const&, ...) in /code/kotekan/lib/cuda/cudaInputData.cpp:23
// [0x53be5f]" is one frame with its source line, and no line of the paste
// but the first (the program's DEBUG line) is program output.
func TestHunt41WrappedFrameLines(t *testing.T) {
	data, err := os.ReadFile("../../testdata/sanitizer/field/kotekan1234_api_error_wrapped_frames_cut.txt")
	if err != nil {
		t.Fatal(err)
	}
	tb, meta, err := read(t, "kotekan1234", data, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.records) != 1 || tb.records[0]["kind"] != "api" || tb.records[0]["api"] != "cudaHostGetFlags" {
		t.Fatalf("records %v", tb.records)
	}
	fr := framesOf(tb, "0")
	if len(fr) != 4 {
		t.Fatalf("%d frames, want 4 (libcuda, cudaHostGetFlags, the constructor, the cut handler): %v", len(fr), fr)
	}
	want := "cudaInputData::cudaInputData(kotekan::Config&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, kotekan::bufferContainer&, cudaDeviceInterface&, int)"
	if fr[2]["function"] != want || fr[2]["file"] != "/code/kotekan/lib/cuda/cudaInputData.cpp" || fr[2]["line"] != "23" || fr[2]["pc"] != "5488223" {
		t.Errorf("frame 2 %v: want it joined: %q at cudaInputData.cpp:23, pc 0x53be5f", fr[2], want)
	}
	if meta.ProgramLines != 1 {
		t.Errorf("%d program lines, want 1 (the DEBUG line): the wrapped parts were taken for program output", meta.ProgramLines)
	}
	// A backslash at the end of a tool line followed by a tool line is
	// no wrap: nothing joined.
	in := "========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid argument\" on CUDA API call to cudaFree.\n" +
		"=========     Host Frame:C:\\app\\ [0x10]\n" +
		"=========     Host Frame:main [0x20]\n"
	tb, _, err = read(t, "in.txt", []byte(in), false)
	if err != nil || len(framesOf(tb, "0")) != 2 {
		t.Errorf("%v: frames %v, want 2", err, framesOf(tb, "0"))
	}
}

// A paste that ends inside a frame's source path, before its function
// (legion#1655: "=========     Host Frame:/scr" of cuda-memcheck's
// "FILE:LINE:FUNCTION [0x...]"), gives no frame: "/scr" was shown as the
// stack's last function. A function cut short is kept as far as it goes.
func TestHunt41FrameCutBeforeFunction(t *testing.T) {
	data, err := os.ReadFile("../../testdata/sanitizer/field/legion1655_api_error_trailing_spaces_cut.txt")
	if err != nil {
		t.Fatal(err)
	}
	tb, _, err := read(t, "legion1655", data, false)
	if err != nil {
		t.Fatal(err)
	}
	fr := framesOf(tb, "0")
	if len(fr) != 3 {
		t.Fatalf("%d frames, want 3 (libcuda, register_allocation, create_dma_channels): %v", len(fr), fr)
	}
	for _, f := range fr {
		if f["function"] == "/scr" || f["module"] == "/scr" {
			t.Errorf("frame %v: the cut path read as a frame", f)
		}
	}
	for in, want := range map[string]bool{
		"/scr":                                  true,
		`C:\Users\dev\src`:                      true,
		"/home/a/b.cu:12:kern":                  false,
		"std::_Function_handler<cudaCommand* (": false,
		"/usr/lib/libcuda.so.1 (cuLaunchKernel + 0x2b8) [0x222dc8]": false,
	} {
		if got := cutBeforeFunction(in); got != want {
			t.Errorf("cutBeforeFunction(%q) = %v, want %v", in, got, want)
		}
	}
}

// Program output after a tool line, each line ending in a backslash (a C
// macro, a shell line continued), is no editor's wrap: the frame that
// ends in its address keeps its function, no macro text is glued onto
// it, the lines stay program output, and 20,000 of them read in linear
// time (the joins rebuilt the line each time: 3.3 s and 421 MB for
// 20,000 lines in the review of session 42, 0.3 s before the joins).
func TestWrapJoinLeavesProgramOutput(t *testing.T) {
	var b strings.Builder
	b.WriteString("========= COMPUTE-SANITIZER\n")
	b.WriteString("========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid argument\" on CUDA API call to cudaFree.\n")
	b.WriteString("=========     Host Frame:/usr/lib/x86_64-linux-gnu/libcuda.so.1 [0x1234]\\\n")
	const macros = 20000
	for i := 0; i < macros; i++ {
		fmt.Fprintf(&b, "#define X%d(a) do { f(a); } while (0) \\\n", i)
	}
	b.WriteString("=========     Host Frame:main [0x20]\n")
	b.WriteString("========= ERROR SUMMARY: 1 error\n")
	start := time.Now()
	tb, meta, err := read(t, "macros.txt", []byte(b.String()), false)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("%d macro lines read in %v: not linear", macros, d)
	}
	if len(tb.records) != 1 || tb.records[0]["api"] != "cudaFree" {
		t.Fatalf("records %v", tb.records)
	}
	for _, f := range framesOf(tb, "0") {
		if strings.Contains(f["function"], "#define") || strings.Contains(f["file"], "#define") {
			t.Errorf("frame %.200q... has program output glued on", f["function"])
		}
	}
	if meta.ProgramLines < macros {
		t.Errorf("%d program lines, want the %d macro lines", meta.ProgramLines, macros)
	}
}

// Two record starts session 41's forms lost: a record glued after
// progress output ("progress 10%========= Invalid __global__ write"),
// where recordStartRe's "(__)?global\b" could not match "__global__";
// and program output holding a record's first words (">> ERROR:
// Potential overflow in config"), which taught ">>" as the prefix and
// dropped the real record. Each input has one memory-access record.
func TestRecordStartsWholeForm(t *testing.T) {
	rec := "========= Invalid __global__ write of size 4 bytes\n" +
		"=========     at 0x70 in kernel(int *)\n" +
		"=========     by thread (0,0,0) in block (0,0,0)\n" +
		"=========     Address 0x7f0000000400 is out of bounds\n" +
		"=========\n" +
		"========= ERROR SUMMARY: 1 error\n"
	for name, in := range map[string]string{
		"glued":   "========= COMPUTE-SANITIZER\nprogress 10%" + rec,
		"program": ">> ERROR: Potential overflow in config, using defaults\n*** Invalid global size in config, using 1\n" + rec,
	} {
		tb, _, err := read(t, name, []byte(in), false)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(tb.records) != 1 || tb.records[0]["kind"] != "memory-access" || tb.records[0]["size"] != "4" {
			t.Errorf("%s: records %v, want one memory-access record of size 4", name, tb.records)
		}
	}
}

// A log cut inside a host frame's line number ("main in leaky.cu:3" of
// ":31", the fixture leak_full.txt cut there; the session-42 tester's
// san_cut.txt) must not name a line the program does not have: the cut
// frame, which lacks the address the record's other host frames carry,
// is left out with a warning, and no frame reads leaky.cu:3. A frame with
// its address at the cut stays.
func TestCutFrameWithoutAddressLeftOut(t *testing.T) {
	data, err := os.ReadFile("../../testdata/sanitizer/leak_full.txt")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(data), "leaky.cu:31")
	if i < 0 {
		t.Fatal("no leaky.cu:31 in the fixture")
	}
	tb, meta, err := read(t, "cut.txt", data[:i+len("leaky.cu:3")], false)
	if err != nil {
		t.Fatal(err)
	}
	cutMain := 0
	for _, f := range tb.frames {
		if f["file"] == "leaky.cu" && f["line"] == "3" {
			t.Errorf("the cut frame %v keeps its cut line", f)
		}
		if f["function"] == "main" && f["line"] == "(null)" {
			cutMain++
		}
	}
	if cutMain != 1 {
		t.Errorf("%d frames of main without a line, want 1 (the cut one, its function kept)", cutMain)
	}
	if !strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), "ends in the middle of a line") {
		t.Errorf("warnings %q: want the cut line named", meta.Warnings.Strings())
	}
	// Cut after the frame's address: the frame is whole and kept.
	j := strings.Index(string(data[i:]), "]")
	tb, _, err = read(t, "cut2.txt", data[:i+j+1], false)
	if err != nil {
		t.Fatal(err)
	}
	fr := tb.frames
	if len(fr) == 0 || fr[len(fr)-1]["function"] != "main" || fr[len(fr)-1]["line"] != "31" {
		t.Errorf("cut after the address: the last frame %v, want main at leaky.cu:31 kept", fr[len(fr)-1])
	}
}
