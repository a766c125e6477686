package pytorchtext

import (
	"os"
	"strings"
	"testing"
)

// Tables and prints that are seen but cannot be read say so, with their
// line, and read nothing (testdata/README.md names the sources): a
// summary wrapped at 80 columns behind a log prefix (its title goes on on
// the next line) and one cut at 64 columns (its right border gone).
// memory_stats() printed as Python's OrderedDict repr is read (see
// TestStatsOrderedDictPastes).
func TestSeenNotRead(t *testing.T) {
	for _, c := range []struct {
		file, warning string
		line, msgs    int
	}{
		{"pastes/summary_wrapped80_logprefix_evofill.txt", "title is split over lines", 3, 0},
		{"pastes/summary_right_cut64_evofill.txt", "without its right border", 2, 0},
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

// One memory_summary() (s31's summary_dev1_frag.txt, recorded on an H200)
// and copies of it whose cells were reflowed: runs of spaces collapsed to
// one (a chat client, HTML), copied from a rendered table (tabs between
// cells, no borders), and re-indented here (tabs and wide gaps in the
// cells, a prefix). The cells are what the table says, so every copy reads
// the same values, with the same resolutions, as the original, and
// without a warning. The numbers: 1062 MiB allocated, 12420 MiB reserved,
// 1 OOM, 3 retries (the file's own rows).
func TestSummaryReflowed(t *testing.T) {
	orig := readFile(t, "s31/summary_dev1_frag.txt", false)
	if v, ok := orig.stat(0, "allocated_bytes.all.current"); !ok || v.value != 1062*MiB {
		t.Fatalf("original: allocated %+v", v)
	}
	if v, ok := orig.stat(0, "reserved_bytes.all.current"); !ok || v.value != 12420*MiB {
		t.Fatalf("original: reserved %+v", v)
	}
	b, err := os.ReadFile(dir + "s31/summary_dev1_frag.txt")
	if err != nil {
		t.Fatal(err)
	}
	var reindented strings.Builder
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		reindented.WriteString("  [rank1]:\t" + strings.ReplaceAll(strings.ReplaceAll(l, " | ", "\t|\t"), "  ", "      ") + "\n")
	}
	texts := map[string]string{"re-indented": reindented.String()}
	for _, f := range []string{"s31/summary_collapsed.txt", "s31/summary_tabs.txt"} {
		b, err := os.ReadFile(dir + f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	for name, text := range texts {
		rs, err := readText(t, name, text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.stats) != len(orig.stats) || len(rs.meta.Warnings.Strings()) != 0 {
			t.Errorf("%s: %d values (original %d), warnings %q", name, len(rs.stats), len(orig.stats), rs.meta.Warnings.Strings())
			continue
		}
		for i := range rs.stats {
			a, o := rs.stats[i], orig.stats[i]
			if a.key != o.key || a.value != o.value || a.res != o.res || a.device != 1 {
				t.Errorf("%s: %+v, original %+v", name, a, o)
			}
		}
	}
}

// Reflowed tables cut or unreadable are never "0 rows" in silence: a
// collapsed table cut inside a row keeps the rows before it, partial at
// that line; a table without borders cut before its last row is partial
// where it stopped; a bare title followed by prose says the table is not
// read. A table wrapped at 72 columns says it was cut or wrapped.
func TestSummaryReflowedDamaged(t *testing.T) {
	read := func(f string) []string {
		b, err := os.ReadFile(dir + f)
		if err != nil {
			t.Fatal(err)
		}
		return strings.SplitAfter(string(b), "\n")
	}
	col, tabs := read("s31/summary_collapsed.txt"), read("s31/summary_tabs.txt")
	for _, c := range []struct {
		name, text string
		partialAt  int64
		values     int // values kept besides the partial marker
		warning    string
	}{
		// Lines 1-9 of the collapsed table: OOMs row (2 values), the
		// header, Allocated memory (4 values); line 10 is Active memory
		// cut after its name.
		{"collapsed, cut in a row", strings.Join(col[:9], "") + col[9][:20] + "\n", 10, 2 + 4, "is cut at line 10"},
		// Lines 1-6 of the tabbed table: title, OOMs row, header,
		// Allocated, Active, Requested (3 x 4 values); then prose.
		{"tabs, cut before its last row", strings.Join(tabs[:6], "") + "loss 0.31\n", 7, 2 + 3*4, "ends before its last row"},
		{"tabs, title then prose", tabs[0] + "loss 0.31\n", 2, 0, "before any row of it: the table is not read"},
	} {
		rs, err := readText(t, "in", c.text, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p, ok := rs.stat(0, PartialKey)
		if !ok || p.value != c.partialAt || len(rs.stats)-1 != c.values {
			t.Errorf("%s: partial %+v %v, %d values; want line %d, %d values", c.name, p, ok, len(rs.stats)-1, c.partialAt, c.values)
		}
		if ws := rs.meta.Warnings.Strings(); len(ws) != 1 || !strings.Contains(ws[0], c.warning) {
			t.Errorf("%s: warnings %q, want %q", c.name, ws, c.warning)
		}
	}
	rs := readFile(t, "s31/summary_wrapped72.txt", false)
	if ds := rs.meta.Warnings.Diagnostics(); len(ds) != 1 || ds[0].Line != 3 || !strings.Contains(ds[0].Msg, "cut or wrapped at a width") || len(rs.stats) != 0 {
		t.Errorf("wrapped72: %d values, warnings %q", len(rs.stats), rs.meta.Warnings.Strings())
	}
	for _, f := range []string{"s31/summary_collapsed.txt", "s31/summary_tabs.txt", "s31/summary_wrapped72.txt"} {
		b, _ := os.ReadFile(dir + f)
		if !SniffSummary(b) {
			t.Errorf("%s: not sniffed as a summary", f)
		}
	}
}

// s31's summary_dev1_frag.txt with its "|===|" and "|---|" lines removed
// (s32's ms/noseps.txt: a copy that kept only the rows with text) was
// called an OOM log and its table "ends early (no closing border)",
// partial. It is a memory_summary(): sniffed as one (with a log prefix on
// each line too; followed by an OOM message, a log), and whole after its last metric row, as a table without
// borders is, with every value the original has; followed by text, the
// text is read after it. Cut before its last metric, it is partial.
func TestSummaryWithoutRulers(t *testing.T) {
	orig := readFile(t, "s31/summary_dev1_frag.txt", false)
	b, err := os.ReadFile(dir + "s31/summary_dev1_frag.txt")
	if err != nil {
		t.Fatal(err)
	}
	var lines, prefixed []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if t := strings.TrimSpace(l); t == "" || isRuler(strings.Trim(t, "|")) {
			continue
		}
		lines = append(lines, l)
		prefixed = append(prefixed, "[rank1]: "+l)
	}
	noseps := strings.Join(lines, "")
	oom := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 1 has a total capacity of 139.80 GiB of which 126.29 GiB is free. Including non-PyTorch memory, this process has 13.11 GiB memory in use. Of the allocated memory 1.04 GiB is allocated by PyTorch, and 11.09 GiB is reserved by PyTorch but unallocated.\n"
	for name, text := range map[string]string{"noseps": noseps, "prefixed": strings.Join(prefixed, ""), "then a message": noseps + oom} {
		// A log that holds an OOM message too is sniffed as a log (whose
		// reader reads the table in it).
		if hasMsg := strings.Contains(text, "Tried to allocate"); SniffSummary([]byte(text)) == hasMsg || SniffOOM([]byte(text)) != hasMsg {
			t.Errorf("%s: sniffed as a summary %v, as an OOM %v", name, SniffSummary([]byte(text)), SniffOOM([]byte(text)))
		}
		rs, err := readText(t, name, text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.stats) != len(orig.stats) || len(rs.meta.Warnings.Strings()) != 0 {
			t.Errorf("%s: %d values (original %d), warnings %q", name, len(rs.stats), len(orig.stats), rs.meta.Warnings.Strings())
			continue
		}
		for i := range rs.stats {
			if a, o := rs.stats[i], orig.stats[i]; a.key != o.key || a.value != o.value || a.res != o.res || a.device != 1 {
				t.Errorf("%s: %+v, original %+v", name, a, o)
			}
		}
		if want := strings.Count(text, "Tried to allocate"); len(rs.msgs) != want {
			t.Errorf("%s: %d messages, want %d", name, len(rs.msgs), want)
		}
	}
	// Cut after its Allocations row (line 9): partial at line 10.
	rs, err := readText(t, "cut", strings.Join(lines[:9], "")+"loss 0.31\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := rs.stat(0, PartialKey); !ok || p.value != 10 {
		t.Errorf("cut: partial %+v %v; warnings %q", p, ok, rs.meta.Warnings.Strings())

	}
}

// A memory_summary() whose rows carry comments after their right border
// (a blog's annotated copy, testdata/README.md names it): the comments are
// not the table's, so the whole table reads, without a warning and not
// partial: 512 B allocated, 2048 KB (2 MiB) reserved, 2047 KB
// non-releasable. A closing border followed by an OOM message on the same
// line (its line end lost) still ends the table, and the message is read.
func TestSummaryTrailingComments(t *testing.T) {
	rs := readFile(t, "pastes/summary_trailing_comments_blog_zh.txt", false)
	if ws := rs.meta.Warnings.Strings(); len(ws) != 0 {
		t.Errorf("warnings %q", ws)
	}
	if _, ok := rs.stat(0, PartialKey); ok {
		t.Error("read as partial")
	}
	for key, want := range map[string]int64{
		"allocated_bytes.all.current":      512,
		"reserved_bytes.all.current":       2048 << 10,
		"inactive_split_bytes.all.current": 2047 << 10,
		"allocation.all.current":           1,
		"oversize_segments.current":        0,
		"num_ooms":                         0,
	} {
		if v, ok := rs.stat(0, key); !ok || v.value != want {
			t.Errorf("%s: %+v %v, want %d", key, v, ok, want)
		}
	}
	b, err := os.ReadFile(dir + "pastes/summary_trailing_comments_blog_zh.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "|===========================================================================|\n```",
		"|===========================================================================|RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 2.81 GiB already allocated; 25.38 MiB free; 3.06 GiB reserved in total by PyTorch)\n```", 1)
	if text == string(b) {
		t.Fatal("closing border not found")
	}
	rs, err = readText(t, "glued", text, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rs.stat(0, PartialKey); ok || len(rs.msgs) != 1 || rs.msgs[0].gen != string(Gen1) {
		t.Errorf("glued message: %d messages %+v, warnings %q", len(rs.msgs), rs.msgs, rs.meta.Warnings.Strings())
	}
	if v, ok := rs.stat(0, "allocated_bytes.all.current"); !ok || v.value != 512 {
		t.Errorf("glued message: allocated %+v %v", v, ok)
	}
}
