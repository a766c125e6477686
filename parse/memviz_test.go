package parse

import (
	"io"
	"strings"
	"testing"
)

// TestOpenMemoryVizPage: a page of torch.cuda._memory_viz (trace_plot)
// is opened as the pickle it embeds, without _format_viz's NUL padding: it
// starts with the pickle's PROTO opcode and ends with its STOP. Other HTML
// (export_memory_timeline's page, a picture) is left as it is.
func TestOpenMemoryVizPage(t *testing.T) {
	in, err := Open("../testdata/pytorch/model_reload.trace_plot.html", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	b, err := io.ReadAll(in.Reader())
	if err != nil {
		t.Fatal(err)
	}
	if !in.Embedded || len(b) < 2 || b[0] != 0x80 || b[len(b)-1] != '.' {
		t.Errorf("embedded %v, %d bytes %.20q ... %.20q; want a pickle from PROTO to STOP", in.Embedded, len(b), b, b[max(0, len(b)-20):])
	}
	other, err := Open("-", strings.NewReader("<!DOCTYPE html><html><body><img src=\"data:image/png;base64,iVBORw0KGgo=\"></body></html>"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if head, _ := other.Head(); other.Embedded || !strings.HasPrefix(string(head), "<!DOCTYPE html>") {
		t.Errorf("a page without MemoryViz.js: embedded %v, %.40q", other.Embedded, head)
	}
}
