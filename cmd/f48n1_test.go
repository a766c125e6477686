package cmd

import (
	"strings"
	"testing"
)

// f48n1Line is the finding line ("2. undetermined: pid 489 ...") of
// subject in trend's text, "" when none.
func f48n1Line(out, subject string) string {
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, ". "); i > 0 && strings.Trim(l[:i], "0123456789") == "" && strings.Contains(l, subject) {
			return l
		}
	}
	return ""
}

// Graphics processes (type G: Xorg, a desktop shell) in a pasted table
// (nvmlfix11_gtx1070_396_xorg_procs_cut.txt, pytorch_notes_watch_titanxp_455_xorg.md;
// testdata/README.md) were told to log --query-compute-apps, which never
// lists them; pmon does. A DCGM exporter's MIG instance
// (dcgmexporter317_a30_mig_fb_used_cut.txt) was told to log --query-gpu,
// which gives the whole GPU, not the instance.
func TestF48n1AdviceThatWorks(t *testing.T) {
	for _, tt := range []struct {
		file, subject, want, not string
	}{
		{"nvml/nvmlfix11_gtx1070_396_xorg_procs_cut.txt", "pid 489 (/usr/bin/X)", "nvidia-smi pmon -s m", "--query-compute-apps="},
		{"nvml/pytorch_notes_watch_titanxp_455_xorg.md", "pid 1130 (/usr/lib/xorg/Xorg)", "nvidia-smi pmon -s m", "--query-compute-apps="},
		{"nvml/dcgmexporter317_a30_mig_fb_used_cut.txt", "GPU 0 MIG instance 3 ", "DCGM_FI_DEV_FB_USED series", "log for longer (nvidia-smi --query-gpu"},
		// A compute process keeps its advice.
		{"nvml/vllm_notes_watch_i2_a100_595.txt", "pid 175134 (VLLM::EngineCore)", "--query-compute-apps=", "pmon"},
	} {
		_, out, _ := run(t, nil, "trend", td+tt.file)
		l := f48n1Line(out, tt.subject)
		if l == "" {
			t.Errorf("%s: no finding of %s in %q", tt.file, tt.subject, out)
			continue
		}
		if !strings.Contains(l, tt.want) || strings.Contains(l, tt.not) {
			t.Errorf("%s: %q; want %q, not %q", tt.file, l, tt.want, tt.not)
		}
	}
}
