package pytorchtext

import (
	"strings"
	"testing"
)

// Messages whose first words were cut off: a comment quoting only the part
// in parentheses, a log cut at its start. From its GPU on the message is
// PyTorch's and nobody else's, so it is read (the request unknown) when it
// parses whole; the same words in a sentence, or cut at both ends, are no
// message. (testdata/README.md, "Pastes found in the field", names the sources.)
func TestMessageCutBeforeItsRequest(t *testing.T) {
	const MiB, GiB = 1 << 20, 1 << 30
	hund := func(h, unit int64) int64 { return (h*unit + 50) / 100 }
	for _, c := range []struct {
		name, text string
		gen        string // "" for no message
		device     int32
		total      int64
		free       int64
		processes  int
	}{
		// github.com/Morizeyao/GPT2-Chinese issue 215, a comment: the 1.x
		// parentheses alone.
		{"gen1 parentheses", "(GPU 0; 15.75 GiB total capacity; 79.11 MiB already allocated; 3.62 MiB free; 86.00 MiB reserved in total by PyTorch)\n", "1.x", 0, hund(1575, GiB), hund(362, MiB), 0},
		// github.com/CompVis/stable-diffusion issue 702, a comment: the
		// same without "(", in a code span.
		{"gen1 backticks", "```GPU 0; 4.00 GiB total capacity; 3.08 GiB already allocated; 0 bytes free; 3.47 GiB reserved in total by PyTorch```\n", "1.x", 0, 4 * GiB, 0, 0},
		// github.com/Tianhao-Qi/Mask2DiT issue 4's 2.3+ message, its
		// first sentence cut off by this test.
		{"gen2", "GPU 0 has a total capacity of 79.33 GiB of which 26.16 GiB is free. Process 76883 has 53.16 GiB memory in use. Of the allocated memory 11.97 GiB is allocated by PyTorch, and 40.69 GiB is reserved by PyTorch but unallocated.\n", "2.x", 0, hund(7933, GiB), hund(2616, GiB), 1},
		// 2.1's "capacty", behind a log prefix.
		{"gen2 typo", "ERROR x.py:1] GPU 3 has a total capacty of 12.00 GiB of which 9.02 GiB is free. Of the allocated memory 984.52 MiB is allocated by PyTorch, and 463.48 MiB is reserved by PyTorch but unallocated.\n", "2.x", 3, 12 * GiB, hund(902, GiB), 0},
		// Cut at both ends: too little to be sure of.
		{"cut both ends", "(GPU 0; 15.75 GiB total capacity; 79.11 MiB already alloc\n", "", 0, 0, 0, 0},
		// Prose and other programs' words.
		{"prose", "The GPU 0 has a total capacity of 24 GiB, of which most is free.\n", "", 0, 0, 0, 0},
		{"spec sheet", "RTX 4090 (GPU 0; 24 GiB total capacity; fast)\n", "", 0, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := readText(t, c.name, c.text, false)
			if err != nil {
				t.Fatal(err)
			}
			if c.gen == "" {
				if len(rs.msgs) != 0 {
					t.Fatalf("messages %+v", rs.msgs)
				}
				return
			}
			if len(rs.msgs) != 1 {
				t.Fatalf("%d messages, warnings %q", len(rs.msgs), rs.meta.Warnings.Strings())
			}
			m := rs.msgs[0]
			_, hasReq := m.sizes["requested"]
			if m.gen != c.gen || hasReq || m.device != c.device || m.sizes["total"] != c.total || m.sizes["free"] != c.free || m.reason != "" {
				t.Errorf("message %+v", m)
			}
			if len(rs.procs) != c.processes {
				t.Errorf("processes %+v", rs.procs)
			}
			ws := rs.meta.Warnings.Strings()
			if len(ws) != 1 || !strings.Contains(ws[0], "starts at its GPU") || !strings.Contains(ws[0], "size asked for is not in it") {
				t.Errorf("warnings %q", ws)
			}
		})
	}
}

// Shortened messages: a 1.x message whose parentheses close right after
// "already allocated" (a guide's example), and a 2.x one whose figures
// stop at an ellipsis ("is free....", a blog's paste) read as cut there,
// the figures before kept; without that nothing was read from them.
func TestMessageAbridged(t *testing.T) {
	for _, c := range []struct {
		file, reason string
		sizes        []string // read
	}{
		{"pastes/pt1.x_abridged_paren_llmconfigurator.txt", "where its parentheses close", []string{"requested", "total", "allocated"}},
		{"pastes/pt2.x_ellipsis_after_free_ko_blog.txt", "where an ellipsis stands for the rest", []string{"requested", "total", "free"}},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages", c.file, len(rs.msgs))
		}
		m := rs.msgs[0]
		if m.gen != "cut" || !strings.Contains(m.reason, c.reason) {
			t.Errorf("%s: %+v", c.file, m)
		}
		for _, k := range c.sizes {
			if _, ok := m.sizes[k]; !ok {
				t.Errorf("%s: %s not read: %+v", c.file, k, m.sizes)
			}
		}
	}
}

// github.com/mlcommons/algorithmic-efficiency issue 182: a PyTorch
// message raised, then logged again by the runner in an absl WARNING
// record ("W1019 ... submission_runner.py:350] error: ..."). The record is
// not counted (the exception is), and the warning says why without
// putting it on TensorFlow, which is not in this program.
func TestLoggedPyTorchMessageNotTensorFlow(t *testing.T) {
	rs := readFile(t, "pastes/pt1.x_absl_warning_repeat_mlcommons182.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 2 {
		t.Fatalf("messages %+v", rs.msgs)
	}
	ws := rs.meta.Warnings.Strings()
	if len(ws) != 1 || !strings.Contains(ws[0], "WARNING level") || strings.Contains(ws[0], "TensorFlow") || !strings.Contains(ws[0], "caught and logged") {
		t.Errorf("warnings %q", ws)
	}
}

// Prose quoting the form with an ellipsis, without an exception type or
// "CUDA out of memory" before it (testdata/README.md describing a file:
// "`Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 4.00 GiB
// ...`"), is no message; the same shortening after "torch.OutOfMemoryError:
// CUDA out of memory." is one, cut there (TestMessageAbridged).
func TestEllipsisInProseIsNoMessage(t *testing.T) {
	rs, err := readText(t, "prose", "the OOM message (`Tried to allocate 20.00\n  MiB. GPU 0 has a total capacity of 4.00 GiB ...`, line 15), then the summaries.\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 0 {
		t.Errorf("messages %+v", rs.msgs)
	}
}

// A traceback whose last line was cut inside "Tried to allocate"
// (pastes/cut_inside_tried_to_allocate.txt: a collector's line limit) is
// an OOM that does not parse, not prose: it was dropped, and the log read
// as one without an OOM.
func TestMessageCutInsideRequestWords(t *testing.T) {
	rs := readFile(t, "pastes/cut_inside_tried_to_allocate.txt", false)
	if len(rs.msgs) != 1 {
		t.Fatalf("%d messages, want the cut one", len(rs.msgs))
	}
	if m := rs.msgs[0]; m.gen != "unparsed" || !strings.Contains(m.reason, "ends at column 48") {
		t.Errorf("%+v", m)
	}
}

// A message shortened with an ellipsis partway into an optional phrase
// ("Including non-PyTorch …", a chat or dashboard's shortening;
// pastes/cut_unicode_ellipsis_inside_phrase.txt) is cut there, the
// request, total and free memory kept. It did not parse ("want \"Of the
// allocated memory \""), and nothing was read from it.
func TestMessageEllipsisInsidePhrase(t *testing.T) {
	rs := readFile(t, "pastes/cut_unicode_ellipsis_inside_phrase.txt", false)
	if len(rs.msgs) != 1 {
		t.Fatalf("%d messages", len(rs.msgs))
	}
	m := rs.msgs[0]
	if m.gen != "cut" || !strings.Contains(m.reason, "where an ellipsis stands for the rest") {
		t.Errorf("%+v", m)
	}
	for _, k := range []string{"requested", "total", "free"} {
		if _, ok := m.sizes[k]; !ok {
			t.Errorf("%s not read: %+v", k, m.sizes)
		}
	}
	for _, text := range []string{"Including non-PyTorch ...", "Includ...", "Including non-PyTorch memory, this process has 4.78 GiB memory in use. Of the allocated memory 4.19 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unall…"} {
		line := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 135.01 GiB is free. " + text + "\n"
		rs, err := readText(t, "in", line, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != 1 || rs.msgs[0].gen != "cut" {
			t.Errorf("%q: %+v", text, rs.msgs)
		}
	}
}
