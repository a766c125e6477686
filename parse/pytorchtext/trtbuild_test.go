package pytorchtext

import (
	"strings"
	"testing"
)

// TensorRT's builder logs its allocator's failure at ERROR level, then
// skips the tactic and goes on; only a build that then fails (or a run
// that ends) makes it an OOM (trtbuild.go). Before, every such line was
// one OOM, and --fail-on oom tripped on builds that completed.
//
//   - NVIDIA/TensorRT#840 (the stored excerpt, cut inside its tenth
//     ERROR line, which is then no whole status): 9 failures of TensorRT
//     7, each followed by "Get cuda error during getBestTactic" or
//     "... timeReformat", and no line of a failed build: skipped, one
//     warning among NotOOMs, no OOM (was 9 OOM rows).
//   - a TensorRT 10 build (synthetic, from the lines of
//     NVIDIA/TensorRT#4258 and zz990099/foundationpose_cpp#22): the
//     failure, "Requested amount of GPU memory (7742685184 bytes)", the
//     skip, "Engine built in": no OOM; the note gives the request,
//     7742685184 bytes = 7.21 GiB (7742685184 / 2^30 = 7.2109...).
//   - the same cut right after the failure: an OOM (as before), and a
//     warning that whether the builder went on cannot be told.
//   - a skip then a failed build (#4258's "Could not find any
//     implementation", tkDNN#42's and TensorRT#477's TensorRT 7 lines):
//     the OOM stays, no note.
func TestTRTTactics(t *testing.T) {
	for _, c := range []struct {
		file   string
		lines  []int64 // of the OOM rows
		notOOM []string
		warn   string // a warning that must be there ("" none asked)
	}{
		{"pastes/trt7_skipped_tactics_excerpt_tensorrt840.txt", nil, []string{"9 allocation failures, lines 3 to 19,", "skipped 9 tactics for memory", "the text ends with no line of a failed build"}, ""},
		{"pastes/synthetic_trt10_tactic_skipped_built.txt", nil, []string{"an allocation failure (Cuda Runtime (out of memory))", "skipped 1 tactic for memory, the largest request 7742685184 bytes (7.21 GiB)", "the build completed after it"}, ""},
		{"pastes/synthetic_trt10_tactic_cut_after_error.txt", []int64{2}, nil, "whether the builder went on cannot be told"},
		{"pastes/trt_default_allocator_trtexec_tensorrt4258.txt", []int64{3}, nil, ""},
		{"pastes/trt7_tkdnn_build_failed_tkdnn42.txt", []int64{1}, nil, ""},
		{"pastes/trt7_windows_allocator_tensorrt477.txt", []int64{1}, nil, ""},
	} {
		rs := readFile(t, c.file, false)
		var lines []int64
		for _, m := range rs.msgs {
			lines = append(lines, m.line)
		}
		if len(lines) != len(c.lines) || len(lines) > 0 && lines[0] != c.lines[0] {
			t.Errorf("%s: OOM rows on lines %v, want %v", c.file, lines, c.lines)
		}
		notes := rs.meta.NotOOMs.Strings()
		if (len(notes) == 1) != (c.notOOM != nil) || len(notes) > 1 {
			t.Errorf("%s: %d not-OOM notes, want %v: %.200q", c.file, len(notes), c.notOOM != nil, notes)
		}
		for _, w := range c.notOOM {
			if len(notes) == 1 && !strings.Contains(notes[0], w) {
				t.Errorf("%s: note lacks %q: %.200q", c.file, w, notes[0])
			}
		}
		if c.warn != "" && !strings.Contains(strings.Join(rs.meta.Warnings.Strings(), "\n"), c.warn) {
			t.Errorf("%s: no warning %q: %.200q", c.file, c.warn, rs.meta.Warnings.Strings())
		}
	}
}

// What ends a TensorRT build decides its held failures, also over two
// builds in one log, and for a Python exception that ends the run
// (synthetic lines in the forms of the pastes above).
func TestTRTTacticsSettle(t *testing.T) {
	const (
		fail = "[11/22/2024-13:40:47] [E] Error[1]: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)\n"
		skip = "[11/22/2024-13:40:47] [W] [TRT] UNSUPPORTED_STATE: Skipping tactic 3 due to insufficient memory on requested size of 629145600 detected for tactic 0xa5a46bfbd719d757.\n"
	)
	for _, c := range []struct {
		name, text string
		lines      []int64
		notes      int
	}{
		// The first build completes: a note; the second fails: its
		// failure (line 4) is the one OOM.
		{"two builds", fail + skip + "[I] Engine built in 3.1 sec.\n" + fail + skip + "[E] Error[10]: IBuilder::buildSerializedNetwork: Error Code 10: Internal Error (Could not find any implementation for node {ForeignNode[/1/Slice_4]}.)\n", []int64{4}, 1},
		{"exception ends the run", fail + skip + "Traceback (most recent call last):\n  File \"export.py\", line 9, in <module>\n    engine.serialize()\nAttributeError: 'NoneType' object has no attribute 'serialize'\n", []int64{1}, 0},
		// The status as a raised exception's text (the traceback ends
		// with it): the run ended, an OOM with no "cannot be told".
		{"raised", "Traceback (most recent call last):\n  File \"build.py\", line 3, in <module>\n    engine = builder.build()\nRuntimeError: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)\n", []int64{4}, 0},
		// A skip line of another cause is no skip for memory: the failure
		// it follows stays an OOM.
		{"other skip", fail + "[E] 9: Skipping tactic0x00000000000003e8 due to exception no kernel image is available for execution on the device\n[I] done\n", []int64{1}, 0},
	} {
		rs, err := readText(t, c.name, c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		var lines []int64
		for _, m := range rs.msgs {
			lines = append(lines, m.line)
		}
		if len(lines) != len(c.lines) || len(lines) > 0 && lines[0] != c.lines[0] || rs.meta.NotOOMs.Len() != c.notes {
			t.Errorf("%s: OOM rows on lines %v (want %v), %d notes (want %d)", c.name, lines, c.lines, rs.meta.NotOOMs.Len(), c.notes)
		}
		if w := strings.Join(rs.meta.Warnings.Strings(), "\n"); strings.Contains(w, "cannot be told") {
			t.Errorf("%s: %.200q", c.name, w)
		}
	}
}
