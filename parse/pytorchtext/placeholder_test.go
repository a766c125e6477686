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
