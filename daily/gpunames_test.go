package daily

import "testing"

// A GPU's name as logs give it: nvidia-smi's table cuts long names
// ("Tesla V100-PCIE..."), drivers before R470 leave out "NVIDIA ". Those
// are one GPU's names; a GTX TITAN and a GTX TITAN X are not.
func TestGPUNamesAgree(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"Tesla V100-PCIE...", "Tesla V100-PCIE-16GB", true},
		{"A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", true},
		{"NVIDIA GeForce ...", "NVIDIA GeForce RTX 3090", true},
		{"GeForce GTX TITAN", "GeForce GTX TITAN X", false},
		{"GeForce GTX TITAN", "NVIDIA H100 80GB HBM3", false},
		{"NVIDIA  H100 80GB HBM3", "nvidia h100 80gb hbm3", true},
	} {
		if got := gpuNamesAgree(normGPUName(c.a), normGPUName(c.b)); got != c.same {
			t.Errorf("%q, %q: agree %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
