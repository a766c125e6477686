package nvml

import (
	"testing"

	"github.com/gpuleak/gpuleak/parse"
)

// After a line of text, a "#" line naming gpu and pid was taken for a
// pmon header whatever followed: a pasted script's comment ("# gpu pid
// monitor" above "import pynvml") was "the pmon log has no fb column",
// and so was gpuleak's own trend table under its input lines. dmon and
// pmon print a "#" units line under their header; a log led by text is
// theirs only with it.
func TestR48bLedMonNeedsUnitsLine(t *testing.T) {
	for _, c := range []struct {
		head string
		want parse.Format
	}{
		{"Here is my script:\n\n```python\n# gpu pid monitor\nimport pynvml\npynvml.nvmlInit()\n```\n", parse.FormatUnknown},
		{"run.csv: nvidia-smi-query-gpu, 459 samples\n\n #  GPU  PID  PROCESS  CLASS  SAMPLES\n 1    0    -  -  sawtooth  459\n", parse.FormatUnknown},
		{"The log looks like this:\n# gpu        pid  type    fb   command\n# Idx          #   C/G    MB   name\n    0       1234     C   500   python\n", FormatPmon},
		{"The log looks like this:\n```\n# gpu    pwr  gtemp     fb\n# Idx      W      C     MB\n    0     64     30      4\n```\n", FormatDmon},
	} {
		if got := Sniff([]byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q) = %v, want %v", c.head, got, c.want)
		}
	}
}
