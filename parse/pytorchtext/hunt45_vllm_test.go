package pytorchtext

import (
	"math"
	"testing"
)

// vLLM V1 refuses to start when the GPU's free memory is below
// gpu_memory_utilization × its total ("Free memory on device cuda:1
// (19.77/22.05 GiB) on startup is less than desired GPU memory
// utilization (0.9, 19.84 GiB)."): pytorch/pytorch#175666's CI log. It
// was "no CUDA out-of-memory message in it"; it is now a kv-cache message
// whose figures are read: device 1, 19.77 GiB free of 22.05, 19.84 asked.
// The same words in the start-up log of a run that passed the check
// (another kit's "Free memory on device (110.37/121.69 GiB) on startup."
// and "Desired GPU memory utilization is ...") are no message.
func TestHunt45VLLMStartupFree(t *testing.T) {
	gib := func(f float64) int64 { return int64(math.Round(f * (1 << 30))) }
	rs := readFile(t, "pastes/vllm_startup_free_less_than_util_pytorch175666.txt", false)
	if len(rs.msgs) != 1 || rs.msgs[0].gen != string(GenKVCache) || rs.msgs[0].exception != "ValueError" {
		t.Fatalf("%+v, want one kv-cache message after ValueError", rs.msgs)
	}
	dev, free, total, desired, util, ok := VLLMStartupFigures(rs.msgs[0].text)
	if !ok || dev != 1 || free != gib(19.77) || total != gib(22.05) || desired != gib(19.84) || util != "0.9" {
		t.Errorf("figures %d %d %d %d %q %v, want device 1, 19.77 of 22.05 GiB, 19.84 GiB at 0.9", dev, free, total, desired, util, ok)
	}
	if rs := readFile(t, "pastes/vllm_startup_free_passed_glm5dgx47.txt", false); len(rs.msgs) != 0 {
		t.Errorf("a start-up that passed the check: %+v, want no message", rs.msgs)
	}
	// Before 0.11 the device is not printed.
	rs, err := readText(t, "old", "ValueError: Free memory on device (13.51/23.55 GiB) on startup is less than desired GPU memory utilization (0.9, 21.20 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 {
		t.Fatalf("no device: %d messages, want 1", len(rs.msgs))
	}
	if dev, free, _, _, _, ok := VLLMStartupFigures(rs.msgs[0].text); !ok || dev != -1 || free != gib(13.51) {
		t.Errorf("no device: device %d free %d ok %v, want -1, 13.51 GiB", dev, free, ok)
	}
}
