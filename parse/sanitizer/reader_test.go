package sanitizer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// row is one table row, each column rendered by Arrow's ValueStr ("(null)"
// for nulls).
type row map[string]string

type tables struct {
	records, frames, runs []row
}

// read parses data (XML when xml is set) with a checked allocator and
// returns every row; it fails the test if Arrow memory is left allocated.
func read(t *testing.T, name string, data []byte, xml bool, opts ...Option) (*tables, *Metadata, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts = append(opts, WithAllocator(mem))
	var r *Reader
	if xml {
		r = NewXMLReader(bytes.NewReader(data), name, opts...)
	} else {
		r = NewReader(bytes.NewReader(data), name, opts...)
	}
	defer r.Release()
	out := &tables{}
	for r.Next() {
		rec := r.RecordBatch()
		if !rec.Schema().Equal(r.Table().Schema()) {
			t.Fatalf("%s batch has schema %v", r.Table(), rec.Schema())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			rw := row{}
			for c := 0; c < int(rec.NumCols()); c++ {
				rw[rec.ColumnName(c)] = rec.Column(c).ValueStr(i)
			}
			switch r.Table() {
			case TableRecords:
				out.records = append(out.records, rw)
			case TableFrames:
				out.frames = append(out.frames, rw)
			case TableRuns:
				out.runs = append(out.runs, rw)
			}
		}
	}
	meta := *r.Metadata()
	return out, &meta, r.Err()
}

func readFile(t *testing.T, path string) *tables {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tb, _, err := read(t, path, data, strings.HasSuffix(path, ".xml"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tb
}

func framesOf(tb *tables, record string) []row {
	var out []row
	for _, f := range tb.frames {
		if f["record"] == record {
			out = append(out, f)
		}
	}
	return out
}

// TestRealInputs checks the real reports against what
// ../shared/fixtures/README.md (and, for the san_* files, the program
// testdata/gen/leaky.cu with the arguments in testdata/gen/run.sh) says
// they hold.
func TestRealInputs(t *testing.T) {
	for _, tc := range []struct {
		file                  string
		records, leaks, bytes int
		// runs: leak_bytes, leak_allocations, errors, errors_not_printed,
		// processes of the one run.
		sumBytes, sumAllocs, errs, notPrinted, processes string
	}{
		{"leak_full.txt", 8, 8, 6677056, "6677056", "8", "8", "(null)", "1"},
		{"leak_save.xml", 5, 5, 5890624, "(null)", "(null)", "(null)", "(null)", "1"},
		{"leak_long_backtrace.txt", 5, 5, 5890624, "5890624", "5", "5", "(null)", "1"},
		{"leak_nobacktrace.txt", 5, 5, 5890624, "5890624", "5", "5", "(null)", "1"},
		// 5 leaks plus 1 invalid write and 3 API errors: ERROR SUMMARY 9.
		{"leak_with_oob.txt", 9, 5, 5104192, "5104192", "5", "9", "(null)", "1"},
		{"leak_cupy.txt", 6, 6, 3154944, "3154944", "6", "6", "(null)", "1"},
		// --print-limit 3 of "leaky 5": 3 of the 8 leaks printed.
		{"san_print_limit.txt", 3, 3, 4194304 + 2*262144, "6677056", "8", "8", "5", "1"},
		// "leaky 2" with --prefix '### ', --demangle no, --log-file.
		{"san_prefix.txt", 5, 5, 5890624, "5890624", "5", "5", "(null)", "1"},
		{"san_nodemangle.txt", 5, 5, 5890624, "5890624", "5", "5", "(null)", "1"},
		{"san_logfile.txt", 5, 5, 5890624, "5890624", "5", "5", "(null)", "1"},
		// "leaky 1; leaky 2" under one sanitizer: 4 + 5 leaks, one summary.
		{"san_two_processes.txt", 9, 9, 11519104, "11519104", "9", "9", "(null)", "2"},
		// "leaky 3 1" as XML, and its stdout.
		{"san_oob.xml", 9, 5, 5104192, "(null)", "(null)", "(null)", "(null)", "1"},
		{"san_oob_xml_stdout.txt", 9, 5, 5104192, "5104192", "5", "9", "(null)", "1"},
		// torch.ones(1000) and a .item(): a 2 MiB caching-allocator segment
		// and a 4-byte pinned block.
		{"san_torch.txt", 2, 2, 2097156, "2097156", "2", "2", "(null)", "1"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tb := readFile(t, filepath.Join("..", "..", "testdata", "sanitizer", tc.file))
			leaks, bytes := 0, 0
			for _, r := range tb.records {
				if r["kind"] == KindLeak {
					leaks++
					var n int
					for _, c := range r["size"] {
						n = n*10 + int(c-'0')
					}
					bytes += n
				}
			}
			if len(tb.records) != tc.records || leaks != tc.leaks || bytes != tc.bytes {
				t.Errorf("records %d, leaks %d, bytes %d; want %d, %d, %d", len(tb.records), leaks, bytes, tc.records, tc.leaks, tc.bytes)
			}
			if len(tb.runs) != 1 {
				t.Fatalf("%d runs, want 1", len(tb.runs))
			}
			ru := tb.runs[0]
			got := []string{ru["leak_bytes"], ru["leak_allocations"], ru["errors"], ru["errors_not_printed"], ru["processes"]}
			want := []string{tc.sumBytes, tc.sumAllocs, tc.errs, tc.notPrinted, tc.processes}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("run summary %v, want %v", got, want)
			}
		})
	}
}

func TestLeakFullFrames(t *testing.T) {
	tb := readFile(t, "../../testdata/sanitizer/leak_full.txt")
	r := tb.records[0]
	if r["message"] != "Leaked 4,194,304 bytes at 0x7fb262800000" || r["size"] != "4194304" ||
		r["address"] != "140404133462016" || r["save_location"] != "allocation time" || r["line"] != "2" {
		t.Errorf("first record %v", r)
	}
	fr := framesOf(tb, "0")
	if len(fr) != 4 {
		t.Fatalf("%d frames, want 4", len(fr))
	}
	// "Host Frame: make_workspace(unsigned long) in leaky.cu:14 [0x8cc5] in leaky"
	f := fr[2]
	if f["function"] != "make_workspace(unsigned long)" || f["file"] != "leaky.cu" || f["line"] != "14" ||
		f["pc"] != "36037" || f["module"] != "leaky" || f["depth"] != "2" || f["kind"] != FrameHost {
		t.Errorf("frame 2 %v", f)
	}
	// "Host Frame: cudaMalloc [0x4ce76] in leaky": no file part.
	if f := fr[0]; f["function"] != "cudaMalloc" || f["file"] != "(null)" || f["module"] != "leaky" {
		t.Errorf("frame 0 %v", f)
	}
}

func TestTwoLineLayout(t *testing.T) {
	tb := readFile(t, "../../testdata/sanitizer/leak_long_backtrace.txt")
	fr := framesOf(tb, "0")
	if len(fr) != 10 {
		t.Fatalf("%d frames, want 10", len(fr))
	}
	if f := fr[0]; f["function"] != "cuMemAlloc_v2" || f["module"] != "/usr/local/nvidia/lib64/libcuda.so.1" {
		t.Errorf("frame 0 %v", f)
	}
	// "Host Frame:  [0x2a1c9]" then "in /lib/x86_64-linux-gnu/libc.so.6".
	if f := fr[7]; f["function"] != "(null)" || f["pc"] != "172489" || f["module"] != "/lib/x86_64-linux-gnu/libc.so.6" {
		t.Errorf("frame 7 %v", f)
	}
	if f := fr[5]; f["file"] != "/home/user/train/leaky.cu" || f["line"] != "14" {
		t.Errorf("frame 5 %v", f)
	}
}

func TestPrefixAndPython(t *testing.T) {
	tb := readFile(t, "../../testdata/sanitizer/san_prefix.txt")
	if tb.runs[0]["prefix"] != "###" || len(framesOf(tb, "0")) != 4 {
		t.Errorf("prefix run %v, %d frames", tb.runs[0], len(framesOf(tb, "0")))
	}
	tb = readFile(t, "../../testdata/sanitizer/leak_cupy.txt")
	fr := framesOf(tb, "0")
	last := fr[len(fr)-2]
	// The Python frames come after _start, innermost first.
	if last["kind"] != FramePython || last["function"] != "load_batch" || last["file"] != "cupy_leak.py" || last["line"] != "5" || last["pc"] != "(null)" {
		t.Errorf("python frame %v", last)
	}
	tb = readFile(t, "../../testdata/sanitizer/san_torch.txt")
	fr = framesOf(tb, "0")
	if f := fr[len(fr)-1]; f["kind"] != FramePython || f["function"] != "<module>" || f["file"] != "<string>" {
		t.Errorf("python -c frame %v", f)
	}
}

func TestTwoProcesses(t *testing.T) {
	tb := readFile(t, "../../testdata/sanitizer/san_two_processes.txt")
	// "leaky 1" leaks 4 blocks, "leaky 2" 5; program output ("done ...")
	// separates their leak reports.
	var procs []string
	for _, r := range tb.records {
		procs = append(procs, r["process"])
	}
	if got := strings.Join(procs, ""); got != "000011111" {
		t.Errorf("processes %s, want 000011111", got)
	}
}

func TestXML(t *testing.T) {
	tb := readFile(t, "../../testdata/sanitizer/san_oob.xml")
	r := tb.records[0]
	if r["kind"] != KindMemoryAccess || r["kernel"] != "fill" || r["thread"] != "(0,0,0)" || r["block"] != "(1,0,0)" ||
		r["size"] != "4" || r["error"] != "out of bounds" || r["offset"] == "(null)" || r["line"] != "(null)" {
		t.Errorf("precise record %v", r)
	}
	if f := framesOf(tb, "0")[0]; f["kind"] != FrameDevice || f["file"] != "/home/user/train/leaky.cu" || f["line"] != "9" || f["func_offset"] != "192" {
		t.Errorf("where frame %v", f)
	}
	r = tb.records[1]
	if r["kind"] != KindAPI || r["api"] != "cudaFree" || r["error"] != "cudaErrorLaunchFailure" || r["result"] != "719" || r["error_message"] != "unspecified launch failure" {
		t.Errorf("api record %v", r)
	}
	if r := tb.records[4]; r["kind"] != KindLeak || r["memory_type"] != "generic" || r["size"] != "4194304" {
		t.Errorf("leak record %v", r)
	}
}

// TestHandMade reads logs written for these tests from the layouts the
// issue describes (testdata/*.txt beside this file; see testdata/README.md).
func TestHandMade(t *testing.T) {
	t.Run("legacy cuda-memcheck", func(t *testing.T) {
		tb := readFile(t, "testdata/legacy_memcheck.txt")
		if tb.runs[0]["tool"] != ToolCudaMemcheck || len(tb.records) != 4 || tb.runs[0]["errors"] != "4" {
			t.Fatalf("runs %v, %d records", tb.runs, len(tb.records))
		}
		if r := tb.records[1]; r["kind"] != KindAPI || r["api"] != "cudaMemcpy" || r["result"] != "11" {
			t.Errorf("legacy api record %v", r)
		}
		fr := framesOf(tb, "2")
		// "Host Frame:./app (_Z11make_bufferm + 0x1b) [0x1111]"
		if f := fr[2]; f["module"] != "./app" || f["function"] != "_Z11make_bufferm" || f["func_offset"] != "27" || f["pc"] != "4369" {
			t.Errorf("legacy frame %v", f)
		}
		// "Host Frame:./app [0x3e2a1]": a module without a function.
		if f := fr[1]; f["module"] != "./app" || f["function"] != "(null)" {
			t.Errorf("legacy module-only frame %v", f)
		}
		if r := tb.records[3]; r["kernel"] != "scale(float*, int)" || r["size"] != "4" || r["thread"] != "(32,0,0)" {
			t.Errorf("legacy access record %v", r)
		}
		if f := framesOf(tb, "3")[0]; f["file"] != "/src/app/kernels.cu" || f["line"] != "5" || f["func_offset"] != "80" {
			t.Errorf("legacy device frame %v", f)
		}
	})
	t.Run("two-line frames, indented log", func(t *testing.T) {
		tb := readFile(t, "testdata/two_line_frames.txt")
		fr := framesOf(tb, "0")
		if len(fr) != 5 || fr[3]["function"] != "C_A_T_C_H_T_E_S_T_0()" || fr[3]["module"] != "/home/coder/bin/test" || fr[0]["module"] != "/usr/lib/x86_64-linux-gnu/libcuda.so.1" {
			t.Errorf("frames %v", fr)
		}
	})
	t.Run("CI timestamps and CRLF", func(t *testing.T) {
		tb := readFile(t, "testdata/ci_timestamps.txt")
		if len(tb.records) != 1 || tb.records[0]["size"] != "2048" || tb.runs[0]["errors"] != "1" {
			t.Fatalf("records %v runs %v", tb.records, tb.runs)
		}
		if fr := framesOf(tb, "0"); len(fr) != 2 || fr[1]["file"] != "table.cu" || fr[1]["module"] != "app" {
			t.Errorf("frames %v", fr)
		}
	})
	t.Run("device-side records", func(t *testing.T) {
		tb := readFile(t, "testdata/device_side.txt")
		var kinds []string
		for _, r := range tb.records {
			kinds = append(kinds, r["kind"])
		}
		want := "memory-access memory-access race malloc-free uninitialized sync leak hardware-exception"
		if got := strings.Join(kinds, " "); got != want {
			t.Errorf("kinds %s\nwant  %s", got, want)
		}
		r := tb.records[0]
		if r["kernel"] != "is_integral" || r["address"] != "130378863687680" || r["block"] != "(0,11669,0)" {
			t.Errorf("record 0 %v", r)
		}
		fr := framesOf(tb, "0")
		if len(fr) != 5 || fr[1]["function"] != "fT_" || fr[1]["line"] != "196" || fr[2]["depth"] != "2" || fr[3]["kind"] != FrameHost {
			t.Errorf("frames %v", fr)
		}
		if r := tb.records[1]; r["kernel"] != "void bootstrap<unsigned long>(unsigned long*)" {
			t.Errorf("2022 'at 0x.. in f' form: %v", r)
		}
		if f := framesOf(tb, "3")[0]; f["function"] != "worker()" || f["file"] != "heap.cu" || f["line"] != "20" {
			t.Errorf("malloc-free frame %v", f)
		}
		// "progress 50%========= Leaked ...": after unterminated output.
		if r := tb.records[6]; r["memory_type"] != "device heap" || r["size"] != "16" {
			t.Errorf("device-heap leak %v", r)
		}
		if tb.runs[0]["target_error"] != "true" || tb.runs[0]["errors"] != "8" {
			t.Errorf("run %v", tb.runs[0])
		}
	})
	t.Run("several runs", func(t *testing.T) {
		a, _ := os.ReadFile("../../testdata/sanitizer/leak_full.txt")
		b, _ := os.ReadFile("../../testdata/sanitizer/leak_with_oob.txt")
		tb, _, err := read(t, "cat", append(a, b...), false)
		if err != nil {
			t.Fatal(err)
		}
		if len(tb.runs) != 2 || tb.runs[1]["line"] != "57" || tb.runs[1]["records"] != "9" || len(tb.records) != 17 || tb.records[16]["run"] != "1" {
			t.Errorf("runs %v, %d records", tb.runs, len(tb.records))
		}
	})
	t.Run("small batches", func(t *testing.T) {
		data, _ := os.ReadFile("../../testdata/sanitizer/leak_cupy.txt")
		tb, _, err := read(t, "cupy", data, false, WithBatchSize(3))
		if err != nil || len(tb.records) != 6 || len(tb.frames) != 165 {
			t.Errorf("%v: %d records, %d frames", err, len(tb.records), len(tb.frames))
		}
	})
}

// TestGarbage: inputs that are not reports, or broken ones, end with a
// *parse.Error (never a panic); those that are not reports at all wrap
// parse.ErrNotMine.
func TestGarbage(t *testing.T) {
	long := strings.Repeat("x", maxLine+10)
	for _, tc := range []struct {
		name    string
		in      string
		xml     bool
		notMine bool
		want    string
	}{
		{"empty text", "", false, true, "empty input"},
		{"program output only", "hello\nworld\n", false, true, "no compute-sanitizer output"},
		{"binary", "\x00\x01\x02\xff\xfe", false, true, "no compute-sanitizer output"},
		{"line too long", long, false, true, "line longer than 4 MiB before any compute-sanitizer line"},
		{"line too long in a report", "========= COMPUTE-SANITIZER\n" + long, false, false, ":2: line longer than 4 MiB: not a text log"},
		{"size overflow", "========= COMPUTE-SANITIZER\n========= Leaked 99999999999999999999 bytes at 0x1\n", false, false, ":2: bad number"},
		{"address overflow", "========= COMPUTE-SANITIZER\n========= Leaked 1 bytes at 0x1ffffffffffffffffff\n", false, false, ":2: bad address"},
		{"malformed leak", "========= COMPUTE-SANITIZER\n========= Leaked lots of bytes\n", false, false, ":2: malformed leak record"},
		{"malformed summary", "========= COMPUTE-SANITIZER\n========= LEAK SUMMARY: many\n", false, false, ":2: malformed LEAK SUMMARY"},
		{"empty xml", "", true, true, "empty input"},
		{"not xml", "hello", true, true, "text before the root"},
		{"other root", "<?xml version=\"1.0\"?><svg></svg>", true, true, "root element is <svg>"},
		{"truncated xml", "<ComputeSanitizerOutput><record><kind>Leak</kind><what><size>4</size>", true, false, "truncated XML"},
		{"bad size", "<ComputeSanitizerOutput><record><kind>Leak</kind><what><size>-4</size></what></record></ComputeSanitizerOutput>", true, false, "bad <size>"},
		{"bad pc", "<ComputeSanitizerOutput><record><hostStack><frame><pc>zz</pc></frame></hostStack></record></ComputeSanitizerOutput>", true, false, "bad <pc>"},
		{"bad xml", "<ComputeSanitizerOutput><record></kind></ComputeSanitizerOutput>", true, false, "malformed"},
		{"other encoding", "<?xml version=\"1.0\" encoding=\"latin1\"?><ComputeSanitizerOutput/>", true, false, "encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := read(t, "in", []byte(tc.in), tc.xml)
			var pe *parse.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want a *parse.Error", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "in") {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if errors.Is(err, parse.ErrNotMine) != tc.notMine {
				t.Errorf("errors.Is(err, ErrNotMine) = %v, want %v", !tc.notMine, tc.notMine)
			}
			if tc.xml && !tc.notMine && pe.Offset < 0 {
				t.Errorf("XML error without a byte offset: %v", err)
			}
		})
	}
}

// TestTruncatedText: a log cut anywhere still parses; what was read is kept.
func TestTruncatedText(t *testing.T) {
	data, _ := os.ReadFile("../../testdata/sanitizer/leak_full.txt")
	for n := 0; n <= len(data); n += 97 {
		tb, _, err := read(t, "cut", data[:n], false)
		if err != nil {
			if n < 28 && errors.Is(err, parse.ErrNotMine) {
				continue // not even the banner yet
			}
			t.Fatalf("cut at %d: %v", n, err)
		}
		if len(tb.records) > 8 {
			t.Fatalf("cut at %d: %d records", n, len(tb.records))
		}
	}
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		file string
		want parse.Format
	}{
		{"leak_full.txt", FormatText},
		{"san_prefix.txt", FormatText},
		{"leak_cupy.txt", FormatText},
		{"leak_save.xml", FormatXML},
		{"san_oob.xml", FormatXML},
	} {
		data, _ := os.ReadFile(filepath.Join("..", "..", "testdata", "sanitizer", tc.file))
		if got, ok := Sniff(data); !ok || got != tc.want {
			t.Errorf("Sniff(%s) = %q, %v", tc.file, got, ok)
		}
	}
	for _, in := range []string{"", "hello\n", "[==========] Running 3 tests\n", "<html></html>", "\x80\x02}q\x00(X\x08\x00\x00\x00segments"} {
		if f, ok := Sniff([]byte(in)); ok {
			t.Errorf("Sniff(%q) = %q", in, f)
		}
	}
	for _, in := range []string{"testdata/legacy_memcheck.txt", "testdata/two_line_frames.txt", "testdata/ci_timestamps.txt"} {
		data, _ := os.ReadFile(in)
		if f, ok := Sniff(data); !ok || f != FormatText {
			t.Errorf("Sniff(%s) = %q, %v", in, f, ok)
		}
	}
}

// TestSniffWords holds mayMatchSniffLine to sniffLineRe: every line of the
// real logs that the expression matches holds one of sniffWords (were a
// word missing from the list, the sniffer would turn such a log away), and
// lines without any are rejected.
func TestSniffWords(t *testing.T) {
	var files []string
	for _, g := range []string{"../../testdata/sanitizer/*.txt", "../../testdata/sanitizer/field/*.txt", "testdata/*.txt", "../../../shared/fixtures/sanitizer/*.txt"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	// One line of each alternative of the expression, written here from
	// its text, beside the real logs' lines.
	lines := []string{
		"=== COMPUTE-SANITIZER", "=== CUDA-MEMCHECK", "=== Leaked 8 bytes at 0x7f00", "=== LEAK SUMMARY: 8 bytes leaked",
		"=== ERROR SUMMARY: 1 error", "=== RACECHECK SUMMARY: 2 hazards displayed", "=== Program hit cudaErrorInvalidValue (error 1) due to x on CUDA API call to cudaMalloc.",
		"=== Invalid __global__ read of size 4", "=== Uninitialized __global__ memory read of size 4", "=== Host API memory access error at host access to 0x1",
		"=== Error: Race reported between Write access at k+0x10", "=== ERROR:(x) Potential WAW hazard detected at __shared__ 0x0", "=== Barrier error detected. Divergent thread(s) in block",
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(string(data), "\n")...)
	}
	matched := 0
	for _, l := range lines {
		if !sniffLineRe.MatchString(l) {
			continue
		}
		matched++
		if !mayMatchSniffLine([]byte(l)) {
			t.Errorf("sniffLineRe matches %q, which holds none of sniffWords", l)
		}
	}
	if matched < 13 {
		t.Fatalf("only %d lines matched: the expression's alternatives are not all tried", matched)
	}
	if mayMatchSniffLine([]byte("timestamp, index, memory.used [MiB]\n2026/11/30 08:06:12.696, 0, 4907 MiB\n")) {
		t.Error("an NVML CSV log holds a sniff word")
	}
}

// WithProgramOutput hands out the program's lines with the tool's
// blanked: line N of what it writes is line N of the log. In this log
// lines 2 and 4 are the program's ("step 1", "done"); lines 1, 3 and 5
// are the tool's, written as empty lines.
func TestProgramOutput(t *testing.T) {
	log := "========= COMPUTE-SANITIZER\nstep 1\n========= Leaked 4 bytes at 0x10\ndone\n========= ERROR SUMMARY: 1 error\n"
	var out bytes.Buffer
	tb, _, err := read(t, "log", []byte(log), false, WithProgramOutput(&out))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "\nstep 1\n\ndone\n\n"; got != want {
		t.Errorf("program output %q, want %q", got, want)
	}
	if len(tb.records) != 1 {
		t.Errorf("records %v", tb.records)
	}
}

// The tool's own notices are records of kind notice, which the run's
// count of records leaves out: cuda-memcheck 11's two deprecation lines
// (lines 2 and 3), a failure of its own, the target's abnormal end. A
// leak record among them is still a leak, and an unknown line is still
// "other".
func TestNotices(t *testing.T) {
	log := `========= CUDA-MEMCHECK
========= This tool is deprecated and will be removed in a future release of the CUDA toolkit
========= Please use the compute-sanitizer tool as a drop-in replacement
========= Leaked 4 bytes at 0x10
=========
========= Something the tool says that is not known
========= Error: process didn't terminate successfully
=========     The application may have hit an error when dereferencing Unified Memory from the host.
========= No CUDA-MEMCHECK results found
`
	tb, _, err := read(t, "log", []byte(log), false)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range tb.records {
		kinds = append(kinds, r["kind"]+":"+r["line"])
	}
	if got, want := strings.Join(kinds, " "), "notice:2 notice:3 leak:4 other:6 notice:7 notice:9"; got != want {
		t.Errorf("kinds %s, want %s", got, want)
	}
	if d := tb.records[4]["details"]; !strings.HasPrefix(d, "The application may have hit") {
		t.Errorf("notice details %q", d)
	}
	// The leak and the unknown line: 2 records.
	if tb.runs[0]["records"] != "2" {
		t.Errorf("run %v", tb.runs[0])
	}
}

// A cuda-memcheck paste (testdata/README.md) where the program's stderr,
// "CUDA error = 719 at obj_render.cu:771 'cudaDeviceSynchronize()'", is
// written without line endings amid the tool's lines: the record start
// (line 18, after "CUDA error = ") and four of its five host frames (lines
// 21-24, after "719", " at ", "obj_render.cu:" and "771") follow program
// text on their lines. All five frames belong to the record, in order:
// libcuda 0x37a373, ./obj 0x59799, ./obj 0x257e1, libc 0x270b3, ./obj
// 0x8d4e. A frame line glued after program text while no record is open
// is not taken as the tool's.
func TestGluedFrames(t *testing.T) {
	tb := readFile(t, "../../testdata/sanitizer/pub_raytracer_glued_frames.txt")
	if len(tb.records) < 2 || tb.records[1]["line"] != "18" || !strings.HasPrefix(tb.records[1]["message"], "Program hit cudaErrorLaunchFailure") {
		t.Fatalf("records %v", tb.records)
	}
	var pcs []string
	for _, f := range framesOf(tb, "1") {
		pcs = append(pcs, f["pc"]+"@"+f["module"])
	}
	want := []string{
		strconv.Itoa(0x37a373) + "@/lib/x86_64-linux-gnu/libcuda.so.1",
		strconv.Itoa(0x59799) + "@./obj",
		strconv.Itoa(0x257e1) + "@./obj",
		strconv.Itoa(0x270b3) + "@/lib/x86_64-linux-gnu/libc.so.6",
		strconv.Itoa(0x8d4e) + "@./obj",
	}
	if got := strings.Join(pcs, " "); got != strings.Join(want, " ") {
		t.Errorf("frames %s, want %s", got, strings.Join(want, " "))
	}
	log := "========= COMPUTE-SANITIZER\nx=========     Host Frame:./a [0x10]\n========= ERROR SUMMARY: 0 errors\n"
	tb2, _, err := read(t, "log", []byte(log), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb2.frames) != 0 || len(tb2.records) != 0 {
		t.Errorf("frame outside a record taken: records %v, frames %v", tb2.records, tb2.frames)
	}
}

// compute-sanitizer XML cut short inside a <record> (its first 2,500
// bytes: testdata/README.md) is read as the text form cut short is: the
// whole records before the cut are read, the one cut is dropped, and a
// warning says the report was read in part and where. Before, the whole
// file was an error.
func TestXMLCutAfterRecords(t *testing.T) {
	path := "../../testdata/sanitizer/leak_save_cut_in_record.xml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := readFile(t, "../../testdata/sanitizer/leak_save.xml")
	tb, meta, err := read(t, path, data, true)
	if err != nil {
		t.Fatalf("cut XML: %v", err)
	}
	if len(tb.records) == 0 || len(tb.records) >= len(whole.records) {
		t.Fatalf("cut XML: %d records, want some but fewer than the whole file's %d", len(tb.records), len(whole.records))
	}
	for i, rec := range tb.records {
		if rec["kind"] != whole.records[i]["kind"] || rec["size"] != whole.records[i]["size"] {
			t.Errorf("record %d: %v, want the whole file's %v", i, rec, whole.records[i])
		}
	}
	ws := strings.Join(meta.Warnings.Strings(), "\n")
	if !strings.Contains(ws, "read in part: byte offset 2500: truncated XML: the file ends inside a <record>") {
		t.Errorf("warnings %q do not say the report was read in part where it was cut", ws)
	}
	// Cut after a whole record, before the root's end tag: the same.
	tb, meta, err = read(t, "in", []byte("<ComputeSanitizerOutput><record><kind>Leak</kind></record>"), true)
	if ws := strings.Join(meta.Warnings.Strings(), "\n"); err != nil || len(tb.records) != 1 || !strings.Contains(ws, "read in part: ") || !strings.Contains(ws, "truncated XML") {
		t.Errorf("unclosed root: %v, %d records, warnings %q", err, len(tb.records), ws)
	}
}
