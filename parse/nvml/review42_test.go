package nvml

import (
	"strings"
	"testing"
)

// A quoted field list may have spaces after its commas (the review of
// session 42: `--query-gpu="index, memory.used, memory.total"` gave the
// fields [index], and the run failed for want of memory.used).
func TestCommandFieldsQuotedWithSpaces(t *testing.T) {
	for cmd, want := range map[string]string{
		`$ nvidia-smi --query-gpu="index, memory.used, memory.total" --format=csv,noheader,nounits`: "index memory.used memory.total",
		`$ nvidia-smi --query-gpu='index, memory.used' --format=csv,noheader`:                       "index memory.used",
		`$ nvidia-smi --query-gpu=index,memory.used --format=csv,noheader`:                          "index memory.used",
	} {
		if got := strings.Join(commandFields([]byte(cmd)), " "); got != want {
			t.Errorf("%s: fields %q, want %q", cmd, got, want)
		}
	}
}
