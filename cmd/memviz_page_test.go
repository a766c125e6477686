package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryVizPage: the page torch.cuda._memory_viz.trace_plot writes
// (testdata/gen/memviz_page.py, from model_reload.pickle) embeds the
// snapshot, base64-encoded: it is read as that snapshot, every finding and
// the device's line the same as the pickle's (928.9 MiB active, 28 blocks
// in build (model_reload.py:5) a leak, as testdata/README says). A page cut
// short (a download stopped halfway) is an error at the byte of the
// embedded snapshot where it stops, exit 2.
func TestMemoryVizPage(t *testing.T) {
	page := td + "pytorch/model_reload.trace_plot.html"
	code, out, errOut := run(t, nil, "analyze", page)
	if code != 0 {
		t.Fatalf("page: exit %d: %.200q", code, errOut)
	}
	_, want, _ := run(t, nil, "analyze", td+"pytorch/model_reload.pickle")
	if got := strings.ReplaceAll(out, "model_reload.trace_plot.html", "model_reload.pickle"); got != want {
		t.Errorf("the page reads\n%.200q\nthe pickle\n%.200q", got, want)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.html")
	if err := os.WriteFile(cut, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = run(t, nil, "analyze", cut)
	if code != 2 || !strings.Contains(errOut, "of the snapshot the page embeds (base64-decoded)") || !strings.Contains(errOut, "the page ends inside the snapshot it embeds") {
		t.Errorf("cut page: exit %d, %.200q; want 2, where the embedded snapshot stops", code, errOut)
	}
}
