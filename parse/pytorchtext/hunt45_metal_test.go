package pytorchtext

import "testing"

// Metal's command buffer out-of-memory status, as MLX
// (ml-explore/mlx#479) and llama.cpp's Metal backend (ollama#6257)
// print it, was "no CUDA out-of-memory message in it". Each line is now a
// cuda-error message of the library Metal on the MPS backend (Apple's
// GPU); the watchdog's status on the same line form is not one.
func TestHunt45MetalCommandBufferOOM(t *testing.T) {
	for _, c := range []struct {
		file  string
		lines []int64
	}{
		{"pastes/metal_mlx_insufficient_memory_mlx479.txt", []int64{10}},
		{"pastes/metal_ggml_repeated_ollama6257.txt", []int64{2, 4, 6}},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != len(c.lines) {
			t.Fatalf("%s: %d messages, want %d; warnings %.200q", c.file, len(rs.msgs), len(c.lines), rs.meta.Warnings.Strings())
		}
		for i, m := range rs.msgs {
			if m.line != c.lines[i] || m.gen != string(GenCUDAError) || Library(m.text) != "Metal" {
				t.Errorf("%s: %+v, want line %d, cuda-error of Metal", c.file, m, c.lines[i])
			}
		}
	}
	rs, err := readText(t, "watchdog", "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Impacting Interactivity (0000000e:kIOGPUCommandBufferCallbackErrorImpactingInteractivity)\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 0 {
		t.Errorf("the watchdog's status: %+v, want no message", rs.msgs)
	}
}
