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
