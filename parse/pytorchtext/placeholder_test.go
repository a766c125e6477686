package pytorchtext

import (
	"strings"
	"testing"
)

// A writer's abridgment puts a placeholder and an ellipsis where a figure
// was ("GPU X ... only a few hundred MiB free"): the message is cut there,
// its figures before kept, as at an ellipsis (it was unparsed: "want a
// number, found X ..."). 18.84 GiB is 20229295964 bytes (rounded); the
// placeholder starts at column 54. A placeholder without an ellipsis is no
// shortening: the message does not parse.
func TestPlaceholderAbridgment(t *testing.T) {
	for text, want := range map[string]Generation{
		"CUDA out of memory. Tried to allocate 18.84 GiB. GPU X ... 只有几百 MiB free": GenCut,
		"CUDA out of memory. Tried to allocate 18.84 GiB. GPU N… free":             GenCut,
		"CUDA out of memory. Tried to allocate 18.84 GiB. GPU <id> ...":            GenCut,
		"CUDA out of memory. Tried to allocate 18.84 GiB. GPU X has a total":       GenUnparsed,
	} {
		m, _ := ParseMessage(text, 0)
		if m.Generation != want || want == GenCut && (m.Requested != 20229295964 || !Shortened(m.Reason) || !strings.Contains(m.Reason, "column 54")) {
			t.Errorf("%q: %s %d %q", text, m.Generation, m.Requested, m.Reason)
		}
	}
}

// Lines glued into one (a paste that lost its line ends): a message, then
// spaces, then a log record's "Traceback (most recent call last):" was
// read as the traceback's first line only, the message lost (vllm-gfx906
// issue 14: "no CUDA out-of-memory message in it"). The message is read,
// and the traceback after it still starts.
func TestMessageGluedBeforeTraceback(t *testing.T) {
	rs := readFile(t, "pastes/hip_glued_engine_log_gfx906_14.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].gen != string(Gen2) || rs.msgs[0].line != 6 || rs.msgs[0].sizes["requested"] != 64<<20 {
		t.Errorf("%+v", rs.msgs)
	}
}

// The MPS allocator refuses one buffer over Metal's maxBufferLength:
// "Invalid buffer size: 19.45 GB" (pytorch issue 141909, after a traceback
// and quoted in a sentence, the same OOM; 19.45 x 2^30 = 20884278477
// bytes, rounded), "... 19.38 GiB" in a ComfyUI
// error report (ComfyUI-SUPIR issue 151). Before: no message. Other
// programs' "Invalid buffer size: " with a count, and source code, are not.
func TestMPSInvalidBufferSize(t *testing.T) {
	rs := readFile(t, "pastes/mps_invalid_buffer_bmm_pytorch141909.txt", false)
	if len(rs.msgs) != 2 || rs.msgs[1].line != 17 || rs.msgs[1].gen != string(GenMPS) || rs.msgs[1].sizes["requested"] != 20884278477 {
		t.Errorf("141909: %+v", rs.msgs)
	}
	rs = readFile(t, "pastes/mps_invalid_buffer_report_supir151.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].line != 12 || !MPSBufferRefused(rs.msgs[0].text) {
		t.Errorf("supir151: %+v", rs.msgs)
	}
	for _, text := range []string{
		"E/Audio: Invalid buffer size: 512\n",
		"                Log.e(TAG, \"Invalid buffer size: \" + minBufferSize);\n",
		"I'm stuck with the same \"Invalid buffer size\" error.\n",
		"the check prints Invalid buffer size: 2.00 GB when the tensor is too large\n",
	} {
		rs, err := readText(t, "t", text, false)
		if err != nil || len(rs.msgs) != 0 {
			t.Errorf("%q: %+v %v", text, rs.msgs, err)
		}
	}
}
