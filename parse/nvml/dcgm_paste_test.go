package nvml

import (
	"strings"
	"testing"
)

// A DCGM exporter scrape as people paste it (written from the exposition
// format dcgm-exporter prints; labels as in its documentation): indented
// by a Markdown list, "..." for lines left out, HELP and TYPE of a metric
// with no samples, two MIG instances of GPU 0 (GPU_I_ID), and one field
// holding DCGM's int64 blank (9223372036854775792: not supported), which
// is no figure.
const dcgmPaste = `  # HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
  # TYPE DCGM_FI_DEV_SM_CLOCK gauge
  ...
  # HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
  # TYPE DCGM_FI_DEV_FB_FREE gauge
  DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a810a1fc",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="1",Hostname="node1"} 9216
  DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a810a1fc",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="2",Hostname="node1"} 9223372036854775792
  # HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
  # TYPE DCGM_FI_DEV_FB_USED gauge
  DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a810a1fc",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="1",Hostname="node1"} 10752
  DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a810a1fc",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="2",Hostname="node1"} 13
  ...
`

func TestDCGMPaste(t *testing.T) {
	rows, meta, err := readRows(t, "paste.txt", dcgmPaste)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || meta.Skipped != 2 {
		t.Fatalf("%d rows, %d skipped: %+v", len(rows), meta.Skipped, rows)
	}
	a, b := rows[0], rows[1]
	if a.UUID != "GPU-a810a1fc/1" || *a.Used != 10752*MiB || a.Free == nil || *a.Free != 9216*MiB {
		t.Errorf("instance 1: %+v", a)
	}
	if b.UUID != "GPU-a810a1fc/2" || *b.Used != 13*MiB || b.Free != nil {
		t.Errorf("instance 2 (free is DCGM's blank): %+v", b)
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(w, "blank") || !strings.Contains(w, "left out") {
		t.Errorf("warnings %q", w)
	}
}
