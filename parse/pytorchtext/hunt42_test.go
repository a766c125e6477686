package pytorchtext

import (
	"strings"
	"testing"
)

// cudaMallocAsync's message prints what PyTorch allocated, not what its
// pool reserved (testdata/README.md, "OOM pastes hunted in session 42"):
// the reserved column is null. ComfyUI 5886's copy, in markdown bold,
// reads whole: the "**" after the unset limit (2^64 bytes) is no cut and
// no figure.
func TestHunt42AsyncReserved(t *testing.T) {
	for _, c := range []struct {
		file             string
		line             int64
		requested, alloc int64
		total, free      int64
	}{
		{"pastes/async_bold_room_comfyui5886.txt", 4, 1250 * MiB / 100, gib(596), 12 * GiB, 5 * GiB},
		{"pastes/async_chattts9.txt", 1, 320 * MiB, gib(689), gib(2369), 294 * MiB / 100},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages", c.file, len(rs.msgs))
		}
		m := rs.msgs[0]
		if _, ok := m.sizes["reserved"]; ok {
			t.Errorf("%s: reserved %d, want null (the pool's reserved memory is not printed)", c.file, m.sizes["reserved"])
		}
		if _, ok := m.sizes["allowed"]; ok || m.reason != "" {
			t.Errorf("%s: allowed %d, reason %q: the 2^64-byte limit is none, the message whole", c.file, m.sizes["allowed"], m.reason)
		}
		if m.gen != "async" || m.line != c.line || m.device != 0 || !within(m.sizes["requested"], c.requested) || !within(m.sizes["allocated"], c.alloc) || !within(m.sizes["total"], c.total) || !within(m.sizes["free"], c.free) {
			t.Errorf("%s: %+v", c.file, m)
		}
	}
}

// within says a printed size (two decimals of its unit) is want.
func within(got, want int64) bool {
	d := got - want
	return d >= -SizeTolerance(want) && d <= SizeTolerance(want)
}

// ONNX Runtime's BFC arena (testdata/README.md, "OOM pastes hunted in
// session 42"): one message each, the request R as printed (bytes, exact),
// the arena's available bytes of the limit form from the text, no device.
// The words without AllocateRawInternal's place before them are anybody's
// and are not read; a size past int64 is no figure and no panic.
func TestHunt42ORTArena(t *testing.T) {
	for _, c := range []struct {
		file      string
		line      int64
		requested int64
		available int64 // -1: the other form
	}{
		{"pastes/ort_bfc_backtick_v100_onnxruntime9939.txt", 4, 8388608000, -1},
		{"pastes/ort_bfc_status_newline_exa_onnxruntime22702.txt", 4, 4585490524328388608, -1},
		{"pastes/ort_bfc_available0_title_ragflow10295.txt", 1, 135383040, 0},
		{"pastes/ort_bfc_cpu_nchwc_chineseocr355.txt", 3, 285081600, -1},
		// The "\" glued after the size is not read into it.
		{"pastes/ort_bfc_triton_escaped_onnxruntime20038.txt", 3, 2830172160, -1},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages: %+v", c.file, len(rs.msgs), rs.msgs)
		}
		m := rs.msgs[0]
		req, ok := m.sizes["requested"]
		if m.gen != string(GenORT) || m.line != c.line || m.device != -1 || !ok || req != c.requested || m.reason != "" || len(m.sizes) != 1 {
			t.Errorf("%s: %+v", c.file, m)
		}
		if got := ArenaAvailable(m.text); got != c.available {
			t.Errorf("%s: available %d, want %d (text %q)", c.file, got, c.available, m.text)
		}
	}
	if Framework(GenORT) != "ONNX Runtime" {
		t.Errorf("framework %q", Framework(GenORT))
	}
	for text, want := range map[string]int{
		// No place before the words: a C program's, prose.
		"malloc: Failed to allocate memory for requested buffer of size 1024\n":        0,
		"Available memory of 10 is smaller than requested bytes of 20, says my tool\n": 0,
		// The place and the words, the size cut off and nothing after:
		// the arena's OOM, its request unknown.
		"onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size \n": 1,
		// Past int64 (20 digits): not read as a figure, no panic.
		"bfc_arena.cc:376 onnxruntime::BFCArena::AllocateRawInternal Available memory of 99999999999999999999 is smaller than requested bytes of 1\n": 1,
		"bfc_arena.cc:376 onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 99999999999999999999\n":   1,
	} {
		rs, err := readText(t, "t", text, false)
		if err != nil || len(rs.msgs) != want {
			t.Errorf("%q: %+v %v, want %d messages", text, rs.msgs, err, want)
			continue
		}
		if want == 1 {
			if _, ok := rs.msgs[0].sizes["requested"]; ok || !strings.Contains(rs.msgs[0].reason, "below 2^63") {
				t.Errorf("%q: %+v: a size past int64 read", text, rs.msgs[0])
			}
		}
	}
}

// A framework's figure wrapped to the next line is joined (testdata/
// README.md, "OOM pastes hunted in session 42"): Paddle 26892's available
// memory after "available memory is only", and the same kind in ONNX
// Runtime's forms (the size after "of size", the available bytes after
// "Available memory of", the line's trailing space kept or not). A next
// line that does not go on with the form leaves the message cut, its
// figures before the cut kept.
func TestHunt42WrappedFigure(t *testing.T) {
	const ort = "Status Message: bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool) "
	for _, c := range []struct {
		name, text      string
		gen             Generation
		requested, free int64 // -1: null
		cut             bool
	}{
		{"paddle26892", "", GenPaddle, 1644167168, 436862976, false},
		{"paddle, the next line no figure", "Out of memory error on GPU 0. Cannot allocate 1.531250GB memory on GPU 0, available memory is only \nPlease check whether there is any other process using GPU 0.\n", GenPaddle, 1644167168, -1, true},
		{"ort size, trailing space", ort + "Failed to allocate memory for requested buffer of size \n  285081600\n", GenORT, 285081600, -1, false},
		{"ort size, no trailing space", ort + "Failed to allocate memory for requested buffer of size\n285081600\n", GenORT, 285081600, -1, false},
		{"ort available", ort + "Available memory of\n0 is smaller than requested bytes of 135383040\n", GenORT, 135383040, -1, false},
	} {
		var rs *rows
		if c.text == "" {
			rs = readFile(t, "pastes/paddle_wrapped_zh_colon_paddle26892.txt", false)
		} else {
			var err error
			if rs, err = readText(t, "t", c.text, false); err != nil {
				t.Fatal(err)
			}
		}
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages", c.name, len(rs.msgs))
		}
		m := rs.msgs[0]
		get := func(k string) int64 {
			if v, ok := m.sizes[k]; ok {
				return v
			}
			return -1
		}
		if m.gen != string(c.gen) || get("requested") != c.requested || get("free") != c.free || (m.reason != "") != c.cut {
			t.Errorf("%s: %+v", c.name, m)
		}
	}
	if rs, err := readText(t, "t", "onnxruntime::BFCArena::AllocateRawInternal Available memory of\n0 is smaller than requested bytes of 135383040\n", false); err != nil || len(rs.msgs) != 1 || ArenaAvailable(rs.msgs[0].text) != 0 {
		t.Errorf("the available bytes joined: %+v %v", rs, err)
	}
}
