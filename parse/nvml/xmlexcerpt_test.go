package nvml

import (
	"os"
	"strings"
	"testing"
)

// Excerpts of nvidia-smi -q -x, cut by line from the H200 recording
// h200_q_x_process.xml (testdata/README.md: 558 lines; the root opens at
// line 3, GPU 0's <gpu id=...> at 8 and closes at 556, its UUID at 31, its
// fb_memory_usage lines 128-133 with 6671 MiB used, pid 614 python3 at
// 6662 MiB in lines 541-550, the root closes at 558). A paste of just the
// <gpu> section, or one whose first lines were lost, names the same
// memory; where its first lines are lost, GPUs before it may be too, so
// it is read in part, and in either no GPU index can be trusted (the
// place of a <gpu> in an excerpt is not its place in the document). Was:
// "not an NVML sample log" (the sniffer wanted <nvidia_smi_log), and with
// the format given, "element <gpu> closed by </nvidia_smi_log>".
func TestXMLExcerpt(t *testing.T) {
	b, err := os.ReadFile(fixtures + "h200_q_x_process.xml")
	if err != nil {
		t.Fatal(err)
	}
	all := strings.SplitAfter(string(b), "\n")
	lines := func(from, to int) string { return strings.Join(all[from-1:to], "") }
	const uuid = "GPU-7b130ffe-6804-aa30-f01f-380426f2db00"
	for _, c := range []struct {
		name, in string
		uuid     string // the GPU row's, "" where the cut took it
		indexed  bool   // GPU 0 named by index
		cut      string // Metadata.Cut's start; "" for none
	}{
		// The <gpu> section alone: whole, no root, no timestamp.
		{"gpu section", lines(8, 556), uuid, false, ""},
		// From inside its <pci> (line 100) to the end: the GPU's start
		// tag, name and UUID are lost.
		{"cut in pci", lines(100, 558), "", false, "the nvidia-smi XML excerpt from line 1 starts inside <pci>"},
		// From its fb_memory_usage's first child: <fb_memory_usage>
		// itself lost, its end tag there.
		{"cut in fb_memory_usage", lines(129, 556), "", false, "the nvidia-smi XML excerpt from line 1 starts inside <fb_memory_usage>"},
		// Only the root's start tag lost (from line 4): every GPU is
		// there, GPU 0 keeps its index.
		{"root start lost", lines(4, 558), uuid, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, meta, err := readRows(t, "excerpt.xml", c.in)
			if err != nil {
				t.Fatalf("%.200v", err)
			}
			if meta.Format != FormatNvidiaSmiXML || len(rows) != 2 {
				t.Fatalf("format %q, %d rows; want nvidia-smi-xml, the GPU's and pid 614's", meta.Format, len(rows))
			}
			g, p := rows[0], rows[1]
			if g.Used == nil || *g.Used != 6671*MiB || g.PID != nil || g.UUID != c.uuid || (g.GPU != nil) != c.indexed {
				t.Errorf("GPU row %+v; want 6671 MiB, UUID %q, indexed %v", g, c.uuid, c.indexed)
			}
			if p.PID == nil || *p.PID != 614 || p.Used == nil || *p.Used != 6662*MiB || (p.GPU != nil) != c.indexed {
				t.Errorf("process row %+v; want pid 614 at 6662 MiB", p)
			}
			if !strings.HasPrefix(meta.Cut, c.cut) || (c.cut == "") != (meta.Cut == "") {
				t.Errorf("cut %.200q; want %q", meta.Cut, c.cut)
			}
			// An excerpt does not list every process of the host.
			if len(meta.ProcessesListedUs) != 0 && !c.indexed {
				t.Errorf("an excerpt listed as every process: %v", meta.ProcessesListedUs)
			}
		})
	}
}

// An excerpt cut inside its first <gpu> before the memory names no GPU
// index it does not know: the GPU is the excerpt's first, not GPU 0.
func TestXMLExcerptCutBeforeMemory(t *testing.T) {
	_, _, err := readRows(t, "excerpt.xml", "<gpu id=\"00000000:00:06.0\">\n<fb_memory_usage><used>5 MiB\n")
	if err == nil || !strings.Contains(err.Error(), "inside GPU #1 of the excerpt's section") {
		t.Errorf("error %.200v; want it inside GPU #1 of the excerpt", err)
	}
}
