package pytorchtext

import (
	"os"
	"testing"
)

// Session 44: Theano's out-of-memory messages (GenTheano), read from the
// real pastes (testdata/README.md, "Session 44"). Each was "no CUDA
// out-of-memory message" before. The figures are the message's own:
// "Error allocating N bytes ... Driver report F bytes free and T bytes
// total" gives N, F, T in bytes; the CNMeM form gives N only; pygpu's
// b'out of memory' none. Theano's sandbox printf format string quoted
// unformatted ("%li bytes", Theano/Theano#851) has no figures: no
// message.
func TestHunt44TheanoMessages(t *testing.T) {
	if Printer(Message{Generation: GenTheano}) != "Theano" {
		t.Errorf("Printer(GenTheano) is not Theano")
	}
	for _, c := range []struct {
		file                 string
		line                 int64
		requested, free, tot int64
		gen                  string
		n                    int
	}{
		{"theano_cudandarray_driver_report_theano1814.txt", 1, 26214400, 19365888, 1073414144, "theano", 1},
		{"theano_cudandarray_backtick_3dr2n2_25.txt", 1, 33554432, 21364736, 11715084288, "theano", 1},
		{"theano_cudandarray_quoted_imageanalogies10.txt", 1, 45158400, 44666880, 536543232, "theano", 1},
		{"theano_cudandarray_cnmem_disabled_theano3748.txt", 8, 79248000, 19963904, 4294770688, "theano", 1},
		{"theano_cnmem_neuralenhance141.txt", 3, 283115520, -1, -1, "theano", 1},
		{"theano_gpuarray_bytes_oom_theano6342.txt", 6, -1, -1, -1, "theano", 1},
		{"theano_format_string_not_oom_theano851.txt", 0, 0, 0, 0, "", 0},
	} {
		b, err := os.ReadFile("../../testdata/pytorch/pastes/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := readText(t, c.file, string(b), false)
		if err != nil || len(rs.msgs) != c.n {
			t.Errorf("%s: %d messages, %v; want %d", c.file, len(rs.msgs), err, c.n)
			continue
		}
		if c.n == 0 {
			continue
		}
		m := rs.msgs[0]
		get := func(k string) int64 {
			if v, ok := m.sizes[k]; ok {
				return v
			}
			return -1
		}
		if m.gen != c.gen || m.line != c.line || get("requested") != c.requested || get("free") != c.free || get("total") != c.tot || m.reason != "" {
			t.Errorf("%s: %+v; want line %d, %s, requested %d, free %d, total %d", c.file, m, c.line, c.gen, c.requested, c.free, c.tot)
		}
	}
}
