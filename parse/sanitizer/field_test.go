package sanitizer

import (
	"os"
	"strings"
	"testing"
)

// TestFieldOtherTools reads reports of the tools other than memcheck's
// leak check, pasted in bug reports (testdata/sanitizer/field, sources in
// testdata/README.md). What each must give is read off its text:
// the kind of each record by its first line (initcheck's "Uninitialized
// __global__ memory read" and "Host API memory access error ...
// Uninitialized access", racecheck's "Race reported between", old
// cuda-memcheck racecheck's "WARN:(...) Potential RAW hazard"), and the
// run's total from racecheck's RACECHECK SUMMARY, which it prints instead
// of an ERROR SUMMARY.
func TestFieldOtherTools(t *testing.T) {
	dir := "../../testdata/sanitizer/field/"
	cases := []struct {
		file   string
		kinds  string // the kinds of the records, in order
		errors string // the run's summary count ("(null)": none)
		warn   string // a warning that must be there
	}{
		// Quoted without the banner: each was refused as no known format.
		{"cccl4041_initcheck_cut.txt", "uninitialized", "(null)", ""},
		{"cudf23900_racecheck_excerpt.txt", "race", "(null)", ""},
		{"dogqc4_initcheck_host_api.txt", "uninitialized", "(null)", ""},
		{"gunrock844_memcheck_racecheck_warn.txt", "race", "(null)", ""},
		{"cudanative61_synccheck_cut.txt", "sync", "(null)", ""},
		// memcheck's own records, read before too (regression inputs).
		{"cudf15258_invalid_shared_excerpt.txt", "memory-access", "(null)", ""},
		{"pytorch196209_program_output_between.txt", "memory-access", "(null)", ""},
		// "RACECHECK SUMMARY: 1 hazard displayed": the run is whole.
		{"kokkos6217_racecheck_summary.txt", "race", "1", ""},
		// "Warning: Maximum number of hazards reached" is the tool's
		// notice, not a race: two races follow it.
		{"hecbench133_racecheck_max_hazards.txt", "race race", "(null)", "Maximum number of hazards reached"},
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
			if len(tb.runs) != 1 || tb.runs[0]["errors"] != c.errors {
				t.Errorf("runs %v: want errors %s", tb.runs, c.errors)
			}
			if c.warn != "" && !strings.Contains(strings.Join(meta.Warnings.Strings(), "\n"), c.warn) {
				t.Errorf("warnings %q: want one with %q", meta.Warnings.Strings(), c.warn)
			}
		})
	}
}

// TestFieldLegacyDeviceFrame: cuda-memcheck's device frame repeats the
// function and gives its offset in parentheses, "synchronization.jl:12:
// ptxcall_computeBetasAndGradKernel_3 (ptxcall_computeBetasAndGradKernel_3
// : 0x46c0)" (testdata/sanitizer/field/cudanative61_synccheck_cut.txt):
// the frame is "file:line:function" (which the analysis splits, as for the
// "at" line before it), the parenthesis gone, its offset 0x46c0.
func TestFieldLegacyDeviceFrame(t *testing.T) {
	tb := readFile(t, "../../testdata/sanitizer/field/cudanative61_synccheck_cut.txt")
	fr := framesOf(tb, "0")
	if len(fr) < 2 || fr[1]["kind"] != FrameDevice ||
		fr[1]["function"] != "/home/mhorg/.julia/packages/CUDAnative/Mdd3w/src/device/cuda_intrinsics/synchronization.jl:12:ptxcall_computeBetasAndGradKernel_3" ||
		fr[1]["func_offset"] != "18112" {
		t.Errorf("frames %v", fr)
	}
}
