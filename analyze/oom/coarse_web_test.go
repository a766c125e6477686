package oom

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

// textPostmortem reads text as an OOM message paste, as oomInput reads a
// file, and returns its postmortem.
func textPostmortem(t *testing.T, text string) *Postmortem {
	t.Helper()
	return NewPostmortem([]Input{textInput(t, "paste.txt", text)}, PostmortemOptions{})
}

// A post in a Discourse forum, from its page source (testdata/README.md):
// the message broken by "<br>" after "free;", its total typed "24 GiB"
// (the poster retyped it: PyTorch prints "23.69 GiB" for an A10G), a
// link to another post whose title is "Monai label. CUDA out of memory",
// "&gt;&gt;" in PyTorch's hint. Before: two unparsed OOMs (the link text
// and the message, "want \" bytes\" or two decimals"). Now: one OOM, the
// message on line 3, its figures read; the total is coarse (±0.5 GiB).
// Outside PyTorch: 24 - 2.42 - 4.51 = 17.07 GiB, ±0.5 GiB is still far
// more than the 1.64 GiB short, so other processes is the cause at any
// total in 23.5-24.5 GiB (training left on GPU 0, as the thread found).
func TestHTMLCoarsePaste(t *testing.T) {
	pm := postmortem(t, "pastes/html_br_link_coarse_slicer32555.txt")
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs: %+v", len(pm.OOMs), pm.OOMs)
	}
	r := pm.OOMs[0]
	if r.Sources[0].Line != 3 || r.Generation != pytorchtext.Gen1 || r.RequestedBytes != gib(406) || r.DeviceTotalBytes != 24*GiB ||
		r.DeviceFreeBytes != gib(242) || r.AllocatedBytes != gib(437) || r.ReservedBytes != gib(451) {
		t.Errorf("%+v", r)
	}
	if got := causeNames(r); !slices.Equal(got, []string{CauseOtherProcesses}) {
		t.Errorf("causes %v", got)
	}
	if notes := strings.Join(r.Notes, " "); !strings.Contains(notes, "total 24 GiB ±0.5 GiB") || !strings.Contains(notes, "holds at every end of that rounding") {
		t.Errorf("notes %q", r.Notes)
	}
}

// The tester's message (hand-made: no real paste with every figure in
// whole GiB was found), before "does not parse". Read at ±0.5 GiB a
// figure: free 1 GiB could be 0.5-1.5 GiB and PyTorch's 1 GiB reserved
// but unallocated 0-2 GiB against a 1.5-2.5 GiB request, so whether the
// cached memory would have held it, and whether the GPU was short by
// other processes' memory or not at all, is not decided: no cause, and a
// note that says the figures are too coarse.
func TestCoarseFiguresUndecided(t *testing.T) {
	pm := textPostmortem(t, "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB (GPU 0; 24 GiB total capacity; 20 GiB already allocated; 1 GiB free; 21 GiB reserved in total by PyTorch)\n")
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	if r.Generation != pytorchtext.Gen1 || r.RequestedBytes != 2*GiB || r.DeviceTotalBytes != 24*GiB {
		t.Errorf("%+v", r)
	}
	if len(r.Causes) != 0 || r.WouldFitIfContiguous != nil {
		t.Errorf("causes %v, fit %v", causeNames(r), r.WouldFitIfContiguous)
	}
	if notes := strings.Join(r.Notes, " "); !strings.Contains(notes, "too coarse to decide the cause") || !strings.Contains(notes, "requested 2 GiB ±0.5 GiB") {
		t.Errorf("notes %q", r.Notes)
	}
	// One decimal where it decides nothing: a 2.5 GiB request against
	// 0.1 GiB free and 0.1 GiB cached, 23.5 GiB in PyTorch of 23.7: the
	// request is larger than all the GPU's memory left, whatever the
	// last digit; capacity at every corner (±0.05 GiB each).
	pm = textPostmortem(t, "RuntimeError: CUDA out of memory. Tried to allocate 2.5 GiB (GPU 0; 23.7 GiB total capacity; 23.4 GiB already allocated; 0.1 GiB free; 23.5 GiB reserved in total by PyTorch)\n")
	r = pm.OOMs[0]
	if len(r.Causes) == 0 || !strings.Contains(strings.Join(r.Notes, " "), "holds at every end of that rounding") {
		t.Errorf("causes %v, notes %q", causeNames(r), r.Notes)
	}
}

// A 2.x message cut after its total, the process line kept under it
// (testdata/pytorch/pastes/pt2.x_cut_after_total_ru_doc.txt, a report in
// Russian): the process's 21.77 GiB is read (it was not), the message is
// cut where " of which " should follow, and no cause is named (neither
// the free memory nor PyTorch's is given).
func TestCutAfterTotalKeepsProcess(t *testing.T) {
	pm := postmortem(t, "pastes/pt2.x_cut_after_total_ru_doc.txt")
	r := pm.OOMs[0]
	if r.Generation != pytorchtext.GenCut || len(r.OtherProcesses) != 1 || r.OtherProcesses[0].PID != 1185086 || r.OtherProcesses[0].Bytes != gib(2177) ||
		r.DeviceTotalBytes != gib(2197) || r.RequestedBytes != 270*MiB || len(r.Causes) != 0 {
		t.Errorf("%+v", r)
	}
}

// Text copied from web pages and typed with CJK input (hand-made: no
// real paste with these characters was found): no-break spaces (U+00A0,
// U+202F) between a number and its unit, full-width digits; a saved
// page's "<br/>" and character references. Each reads as the message
// PyTorch printed: 20 MiB of 7.79 GiB, 15.44 MiB free. A link whose text
// names the error is no OOM.
func TestWebTextMessages(t *testing.T) {
	const want = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 15.44 MiB free; 6.62 GiB reserved in total by PyTorch)"
	for _, text := range []string{
		strings.NewReplacer("20.00 MiB", "20.00\u00a0MiB", "7.79 GiB", "7.79\u202fGiB").Replace(want),
		strings.NewReplacer("20.00", "２０.００", "15.44", "１５．４４", "(GPU 0", "(GPU\u30000").Replace(want),
		strings.Replace(want, "allocated; ", "allocated;<br/>\n", 1),
		"<p>" + strings.Replace(want, "RuntimeError:", "RuntimeError&#58;", 1) + "</p>",
	} {
		pm := textPostmortem(t, text+"\n")
		if len(pm.OOMs) != 1 {
			t.Errorf("%q: %d OOMs", text, len(pm.OOMs))
			continue
		}
		r := pm.OOMs[0]
		if r.Generation != pytorchtext.Gen1 || r.RequestedBytes != 20*MiB || r.DeviceTotalBytes != gib(779) || r.DeviceFreeBytes != 15*MiB+(44*MiB+50)/100 {
			t.Errorf("%q: %+v", text, r)
		}
	}
	pm := textPostmortem(t, "See (<a href=\"https://example.org/t/26161\">Monai label. CUDA out of memory</a>) for details\n")
	if len(pm.OOMs) != 0 {
		t.Errorf("a link's text read as %d OOMs", len(pm.OOMs))
	}
	// A traceback's "<module>" is no tag: it stays.
	pm = textPostmortem(t, "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n    x = torch.empty(1 << 40, device=\"cuda\")\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4096.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 78.69 GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.\n")
	if len(pm.OOMs) != 1 || pm.OOMs[0].Frame.Name != "<module>" {
		t.Errorf("%+v", pm.OOMs)
	}
}

// A coarse figure is printed back as typed ("24 GiB", it was "24.00 GiB",
// a precision the paste did not have), and a size computed from it with
// no more decimals than its allowance leaves true: the memory outside
// PyTorch on the Discourse paste is 24 - 2.42 - 4.51 = 17.07 GiB ±0.5
// GiB, "17 GiB"; the 1.64 GiB short (4.06 - 2.42, both as PyTorch prints
// them) keeps its two decimals. r.Coarse names the figure as JSON does.
func TestCoarseFiguresPrintedAsTyped(t *testing.T) {
	pm := postmortem(t, "pastes/html_br_link_coarse_slicer32555.txt")
	r := pm.OOMs[0]
	want := []CoarseFigure{{Figure: "device_total_bytes", Bytes: 24 * GiB, Tolerance: GiB / 2, Typed: "24 GiB"}}
	if !slices.Equal(r.Coarse, want) {
		t.Errorf("coarse %+v", r.Coarse)
	}
	ev := r.Causes[0].Evidence
	if !strings.Contains(ev, "2.42 GiB free of 24 GiB for a 4.06 GiB request (1.64 GiB short); 17 GiB was in use outside") || strings.Contains(ev, "24.00") {
		t.Errorf("evidence %q", ev)
	}
	// 2.x, process line typed whole, allocated to one decimal: PyTorch's
	// reserved is summed (19.5 GiB + 10.00 MiB, ±0.05 GiB): "19.5 GiB",
	// and named a figure computed, not typed.
	pm = textPostmortem(t, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.6 GiB of which 100.00 MiB is free. Process 77 has 3 GiB memory in use. Of the allocated memory 19.5 GiB is allocated by PyTorch, and 10.00 MiB is reserved by PyTorch but unallocated.\n")
	r = pm.OOMs[0]
	figs := map[string]CoarseFigure{}
	for _, f := range r.Coarse {
		figs[f.Figure] = f
	}
	if len(figs) != 4 || figs["other_processes[0].bytes"].Typed != "3 GiB" || figs["device_total_bytes"].Typed != "23.6 GiB" ||
		figs["allocated_bytes"].Typed != "19.5 GiB" || figs["reserved_bytes"].Typed != "" || figs["reserved_bytes"].Text() != "19.5 GiB" {
		t.Errorf("coarse %+v", r.Coarse)
	}
	if ev := r.Causes[0].Evidence; !strings.Contains(ev, "100.00 MiB free of 23.6 GiB") || !strings.Contains(ev, "other processes held 3 GiB (process 77: 3 GiB)") {
		t.Errorf("evidence %q", ev)
	}
	if notes := strings.Join(r.Notes, " "); !strings.Contains(notes, "total 23.6 GiB ±0.05 GiB, process 77 3 GiB ±0.5 GiB, allocated 19.5 GiB ±0.05 GiB") {
		t.Errorf("notes %q", r.Notes)
	}
	// As PyTorch prints it: nothing coarse, two decimals.
	pm = textPostmortem(t, "RuntimeError: CUDA out of memory. Tried to allocate 4.06 GiB (GPU 0; 24.00 GiB total capacity; 4.37 GiB already allocated; 2.42 GiB free; 4.51 GiB reserved in total by PyTorch)\n")
	if r = pm.OOMs[0]; r.Coarse != nil || !strings.Contains(r.Causes[0].Evidence, "of 24.00 GiB") || !strings.Contains(r.Causes[0].Evidence, "17.07 GiB was in use") {
		t.Errorf("coarse %+v, evidence %q", r.Coarse, r.Causes[0].Evidence)
	}
}
