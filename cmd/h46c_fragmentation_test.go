package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestH46cFieldFragmentationBar: the fragmentation bar (oom.go,
// fragmentationMinShare: a fifth of reserved memory, or 2 GiB) on the two
// field snapshots nearest it, summed in Python from their segments'
// blocks (inactive blocks in segments that hold an active one):
// MAGMA27__memory_snapshot.pickle holds 982 MiB split of 13.2 GiB
// reserved (7.3%), taken idle after one pass whose trace peaks at 13.0
// GiB active within that reservation: no fragmentation finding.
// cranberrii__memory_snapshot.pickle holds 1.5 GiB split of 6.0 GiB (25%)
// in pieces of 43 MiB or less: a fragmentation finding of that size. Its
// trace records segment entries: at its peak (entry 3697,
// testdata/field_facts.json) 5,888,012,288 bytes (5.5 GiB) were active,
// and the segments then reserved were the end's 6,471,811,072 less the
// 130,023,424 its trace's segment entries reserved after the peak:
// 6,341,787,648 (5.9 GiB), 433 MiB not in use at the peak (Python over
// the pickle). MAGMA27's trace records no segment entry: no peak figure.
func TestH46cFieldFragmentationBar(t *testing.T) {
	if _, err := os.Stat(fieldDir); err != nil {
		t.Skipf("the public snapshots are not here (%v)", err)
	}
	_, out, _ := run(t, nil, "analyze", "--top", "0", filepath.Join(fieldDir, "MAGMA27__memory_snapshot.pickle"))
	if strings.Contains(out, "fragmentation") {
		t.Errorf("MAGMA27: a fragmentation finding at 7%% of reserved:\n%.2000s", out)
	}
	_, out, _ = run(t, nil, "analyze", "--top", "0", filepath.Join(fieldDir, "cranberrii__memory_snapshot.pickle"))
	if !strings.Contains(out, "fragmentation: 1.5 GiB of PyTorch's 6.0 GiB reserved is free but split around live blocks") {
		t.Errorf("cranberrii: no fragmentation finding of 1.5 GiB:\n%.2000s", out)
	}
	if !strings.Contains(out, "at the trace's peak 5.5 GiB was active of the 5.9 GiB then reserved: 433 MiB of the reserve") {
		t.Errorf("cranberrii: the peak's reserve not given:\n%.3000s", out)
	}
}
