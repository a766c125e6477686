package cmd

import (
	"strings"
	"testing"
)

// An nvidia-smi CSV saved as UTF-16 without a byte order mark is read as
// the CSV it is (analyze and trend); before, it was "not an NVML sample
// log ... needs --fields", which points the wrong way.
func TestUTF16NoBOMCSV(t *testing.T) {
	path := td + "nvml/query_gpu_utf16le_nobom.csv"
	for _, c := range []string{"analyze", "trend"} {
		code, out, errOut := run(t, nil, c, path)
		if code != ExitOK || !strings.Contains(out, "nvidia-smi-query-gpu, 11 samples") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c, code, out, errOut)
		}
	}
}
