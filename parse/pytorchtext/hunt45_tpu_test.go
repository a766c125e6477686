package pytorchtext

import (
	"math"
	"testing"
)

// XLA's TPU compiler refuses a program whose buffers do not fit a core's
// HBM: "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of
// memory in memory space hbm. Used U of C hbm. Exceeded hbm capacity by
// E." (JAX; TF 1.x: "Compilation failure: "). All three pastes were "no
// CUDA out-of-memory message in it". Each is now one xla message whose
// request is U and total C, "G" being GiB (7.48G is what a TPU v2 core's
// 8 GiB leaves; 15.48G a v3's 16 GiB); the wrapped paste (lwm60) puts
// "Exceeded ..." on the next line, which is not needed.
func TestHunt45XLATPUHBM(t *testing.T) {
	gib := func(f float64) int64 { return int64(math.Round(f * (1 << 30))) }
	for _, c := range []struct {
		file      string
		line      int64
		used, hbm int64
	}{
		{"pastes/xla_tpu_hbm_compile_easydel78.txt", 6, gib(21.90), gib(7.48)},
		{"pastes/xla_tpu_hbm_wrapped_lwm60.txt", 16, gib(21.95), gib(15.48)},
		{"pastes/xla_tpu_hbm_allocations_easydel166.txt", 2, gib(63.80), gib(30.75)},
	} {
		rs := readFile(t, c.file, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages, want 1; warnings %.200q", c.file, len(rs.msgs), rs.meta.Warnings.Strings())
		}
		m := rs.msgs[0]
		if m.line != c.line || m.gen != string(GenXLA) || m.sizes["requested"] != c.used || m.sizes["total"] != c.hbm || m.reason != "" {
			t.Errorf("%s: %+v, want line %d, xla, requested %d of total %d", c.file, m, c.line, c.used, c.hbm)
		}
		if !XLATPUHBM(m.text) {
			t.Errorf("%s: text %.200q not read as the TPU compiler's", c.file, m.text)
		}
	}
	// An issue title quoting the first sentence has no figures, and the
	// vmem form is a core's on-chip memory: neither is a device OOM.
	for _, text := range []string{
		"JAX / Flax pipeline: \"Ran out of memory in memory space hbm.\" on TPU v2-8\n",
		"RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space vmem.\n",
	} {
		rs, err := readText(t, "t", text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != 0 {
			t.Errorf("%.80q: %d messages, want none", text, len(rs.msgs))
		}
	}
}
