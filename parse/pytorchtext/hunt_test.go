package pytorchtext

import (
	"os"
	"strings"
	"testing"
)

// Tables and prints that are seen but cannot be read say so, with their
// line, and read nothing (testdata/README.md names the sources): a
// summary wrapped at 80 columns behind a log prefix (its title goes on on
// the next line), one cut at 64 columns (its right border gone), and
// memory_stats() printed as Python's OrderedDict repr, alone and after an
// OOM message (which is still read).
func TestSeenNotRead(t *testing.T) {
	for _, c := range []struct {
		file, warning string
		line, msgs    int
	}{
		{"pastes/summary_wrapped80_logprefix_evofill.txt", "title is split over lines", 3, 0},
		{"pastes/summary_right_cut64_evofill.txt", "without its right border", 2, 0},
		{"pastes/stats_ordereddict_rocm703.txt", "OrderedDict repr is not read", 1, 0},
		{"pastes/oom_then_ordereddict_minkowski359.txt", "OrderedDict repr is not read", 9, 1},
	} {
		rs := readFile(t, c.file, false)
		ds := rs.meta.Warnings.Diagnostics()
		if len(ds) != 1 || ds[0].Line != c.line || !strings.Contains(ds[0].Msg, c.warning) || len(rs.stats) != 0 || len(rs.msgs) != c.msgs {
			t.Errorf("%s: %d stats, %d messages, warnings %q", c.file, len(rs.stats), len(rs.msgs), rs.meta.Warnings.Strings())
		}
	}
	// Both tables are recognised as summaries (analyze reads them and
	// says the same as oom).
	for _, f := range []string{"pastes/summary_wrapped80_logprefix_evofill.txt", "pastes/summary_right_cut64_evofill.txt"} {
		b, err := os.ReadFile(dir + f)
		if err != nil {
			t.Fatal(err)
		}
		if !SniffSummary(b) {
			t.Errorf("%s: not sniffed as a summary", f)
		}
	}
}

// Library statuses: where each message starts and what it names.
func TestLibraryMessages(t *testing.T) {
	for _, c := range []struct{ line, text, library string }{
		{"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "cuBLAS"},
		{"RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED", "cuFFT error: CUFFT_ALLOC_FAILED", "cuFFT"},
		{"ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'", "Cuda failure 'out of memory'", "NCCL"},
		// NCCL 2.19+ prints the error's number (alloc.h:228, quoted in a
		// write-up found with the search tool).
		{"include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'", "Cuda failure 2 'out of memory'", "NCCL"},
	} {
		rs, err := readText(t, "x.log", c.line+"\n", false)
		if err != nil || len(rs.msgs) != 1 || rs.msgs[0].gen != string(GenCUDAError) || rs.msgs[0].text != c.text || Library(rs.msgs[0].text) != c.library {
			t.Errorf("%q: %+v %v", c.line, rs.msgs, err)
		}
	}
}
