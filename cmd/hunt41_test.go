package cmd

import (
	"strings"
	"testing"
)

// xxd3vin/workspace #19: a prompt running nvidia-smi, then its error "Unable
// to determine the device handle for GPU 0000:0B:00.0: Unknown Error" alone
// (testdata README, session 41). Read right before and after: nvidia-smi's
// error, exit 2, saying the GPU was lost; never a clean log.
func TestHunt41ToolErrorPaste(t *testing.T) {
	f := td + "nvml/field/xxd3vin19_device_handle_unknown_error.txt"
	code, _, errOut := run(t, nil, "analyze", f)
	if code != ExitInput || !strings.Contains(errOut, f+":2: nvidia-smi's error, not its output") || !strings.Contains(errOut, "lost a GPU") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
