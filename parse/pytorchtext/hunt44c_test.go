package pytorchtext

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// Session 44, helper c (testdata/README.md, "Line prefixes, ranks, Ray's
// folded lines and cut figures (session 44c)").

// pr99699Body is PyTorch 2.1's message of pytorch/pytorch PR 99699 as the
// PR wrapped it, read from the tester's GitHub Actions copy (each line
// behind a 29-byte timestamp "2024-06-22T15:13:25.0790000Z ").
func pr99699Body(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dir + "pastes/s44c_wrapped_ci_pr99699.txt")
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		body = append(body, l[len("2024-06-22T15:13:25.0790000Z "):])
	}
	return body
}

// A message wrapped over lines that each carry a prefix is joined after
// the prefix is taken off each: the tester's GitHub Actions and torchrun
// copies of PR 99699's message were 2 OOMs cut short, "cause not
// determined"; the text reads whole, as it does flush left: 138.00 MiB
// asked, 8.44 MiB free of 15.90 GiB, process 1246069 with 577.00 MiB,
// 14.12 GiB allocated and 410.41 MiB reserved but unallocated. Each
// prefix kind is tried on the same lines: a timestamp that moves on (and
// loses trailing zeros, as kubectl's RFC 3339 stamps do), Ray's worker
// label, vLLM's logger header repeated on every line of a record, srun
// -l's "0: ", a Markdown quote, a timestamp before a rank.
func TestHunt44cWrappedBehindPrefixes(t *testing.T) {
	check := func(name string, rs *rows) {
		t.Helper()
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages %.200q, want 1", name, len(rs.msgs), fmt.Sprint(rs.msgs))
		}
		m := rs.msgs[0]
		if m.line != 1 || m.gen != "2.x" || !within(m.sizes["requested"], 138*MiB) || !within(m.sizes["free"], sz(8.44, MiB)) ||
			!within(m.sizes["total"], sz(15.90, GiB)) || !within(m.sizes["allocated"], sz(14.12, GiB)) || !within(m.sizes["reserved_unallocated"], sz(410.41, MiB)) ||
			len(rs.procs[m.id]) != 1 || rs.procs[m.id][0].PID != 1246069 {
			t.Errorf("%s: %+v, processes %v", name, m, rs.procs[m.id])
		}
	}
	check("ci", readFile(t, "pastes/s44c_wrapped_ci_pr99699.txt", false))
	check("rank", readFile(t, "pastes/s44c_wrapped_rank_pr99699.txt", false))
	body := pr99699Body(t)
	for name, prefix := range map[string]func(i int) string{
		"kubectl stamps": func(i int) string {
			return "2024-06-22T15:13:2" + string(rune('0'+i)) + ".07" + strings.Repeat("1", i%3) + "Z "
		},
		"ray worker": func(int) string { return "(RayWorkerWrapper pid=206994, ip=192.168.10.25) " },
		"vllm header": func(i int) string {
			return "(VllmWorker rank=0 pid=10948) ERROR 03-27 10:29:1" + string(rune('0'+i)) + " [worker_base.py:620] "
		},
		"srun -l":        func(int) string { return "0: " },
		"quote":          func(int) string { return "> " },
		"stamp and rank": func(i int) string { return "2024-06-22 15:13:2" + string(rune('0'+i)) + ",079 [rank0]: " },
	} {
		var b strings.Builder
		for i, l := range body {
			b.WriteString(prefix(i) + l + "\n")
		}
		rs, err := readText(t, name, b.String(), false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		check(name, rs)
	}
	// Another rank's line does not go on a rank's message: rank 1's "GPU
	// 0 has ..." after rank 0's first line leaves rank 0's message cut at
	// its request (no free memory read into it).
	rs, err := readText(t, "ranks", "[rank0]: "+body[0]+"\n[rank1]: "+body[1]+"\n", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) == 0 || rs.msgs[0].line != 1 || rs.msgs[0].prefix != "[rank0]:" {
		t.Fatalf("%.200q, want rank 0's message first", fmt.Sprint(rs.msgs))
	}
	if _, ok := rs.msgs[0].sizes["free"]; ok {
		t.Errorf("rank 0's message took rank 1's figures: %+v", rs.msgs[0])
	}
}

// cudaMallocAsync's message, one figure a line (AIFSH/ComfyUI-ChatTTS
// issue 9), behind a prefix on each line: it was "does not parse" with
// no request; read as flush left: 320.00 MiB asked, 6.89 GiB allocated,
// 23.69 GiB device limit (total), 2.94 MiB free.
func TestHunt44cAsyncBehindPrefixes(t *testing.T) {
	for _, f := range []string{"s44c_async_ci_chattts9.txt", "s44c_async_rank_chattts9.txt"} {
		rs := readFile(t, "pastes/"+f, false)
		if len(rs.msgs) != 1 {
			t.Fatalf("%s: %d messages, want 1", f, len(rs.msgs))
		}
		m := rs.msgs[0]
		if m.gen != "async" || m.reason != "" || !within(m.sizes["requested"], 320*MiB) || !within(m.sizes["allocated"], sz(6.89, GiB)) ||
			!within(m.sizes["total"], sz(23.69, GiB)) || !within(m.sizes["free"], sz(2.94, MiB)) {
			t.Errorf("%s: %+v", f, m)
		}
	}
}

// Frames go to the traceback of their own rank: in the tester's two
// ranks interleaved line by line (awslabs/keys_values issue 92 and an
// added rank 1), rank 1's OOM (line 6) took rank 0's conv1d frame and
// rank 0's (line 7) none. Each now has its own frame: forward
// (model.py:120) for rank 1, conv1d (lora.py:355) for rank 0. A
// timestamp before the rank that moves on keeps the rank's traceback,
// and so do line numbers alone before each line (a paste's gutter, " 10
// ", " 11 ": donaldlab/OSPREY3 issue 67, whose exception keeps its frame
// printGpuInfo; this change first lost it, and make test did not see).
func TestHunt44cFramesByRank(t *testing.T) {
	osprey := readFile(t, "pastes/jcuda_driver_osprey67.txt", false)
	if len(osprey.msgs) == 0 || len(osprey.frames[osprey.msgs[0].id]) == 0 || osprey.frames[osprey.msgs[0].id][0].name != "printGpuInfo" {
		t.Errorf("osprey67: %.200q, frames %v; want printGpuInfo innermost", fmt.Sprint(osprey.msgs), osprey.frames)
	}
	b, err := os.ReadFile(dir + "pastes/s44c_ranks_interleaved_keysvalues92.txt")
	if err != nil {
		t.Fatal(err)
	}
	var stamped strings.Builder
	for i, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		stamped.WriteString("2025-01-0" + string(rune('1'+i)) + "T10:00:0" + string(rune('0'+i)) + "Z " + l + "\n")
	}
	for name, text := range map[string]string{"file": string(b), "stamped": stamped.String()} {
		rs, err := readText(t, name, text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != 2 {
			t.Fatalf("%s: %d messages, want 2", name, len(rs.msgs))
		}
		want := map[int64]string{6: "forward", 7: "conv1d"}
		for _, m := range rs.msgs {
			fr := rs.frames[m.id]
			if len(fr) != 1 || fr[0].name != want[m.line] {
				t.Errorf("%s: line %d frames %+v, want one %s", name, m.line, fr, want[m.line])
			}
		}
	}
}

// sz is a size printed as v units (two decimals), in bytes.
func sz(v float64, unit int64) int64 { return int64(v * float64(unit)) }

// A figure whose number and unit are whole is read when the words after
// it are cut, wherever those words say what it is: 1.x names a figure
// after it ("10.56 MiB fr", "6.60 GiB reser", "6.60 GiB ca" of 1.0-1.3's
// "cached"), and a process's size is whole before "memory in use" (2.x).
// Before, each was dropped with its cut words. A 1.x figure cut before
// any of its words is not read: "reserved in total" and "cached" would
// give it two meanings. (The messages are written for this test in
// PyTorch's forms.)
func TestHunt44cFigureWholeBeforeCut(t *testing.T) {
	const gen1 = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 10.56 MiB free; 6.60 GiB reserved in total by PyTorch)"
	const gen2 = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.66 GiB is free. Process 12 has 1.00 GiB memory in use. Of the allocated memory 12.09 GiB is allocated by PyTorch, and 4.84 GiB is reserved by PyTorch but unallocated."
	cutAt := func(s, after string) string { return s[:strings.Index(s, after)+len(after)] }
	for _, c := range []struct {
		name, text     string
		field          string
		want           int64 // -1: not read
		reserved, proc int64
	}{
		{"free cut in its word", cutAt(gen1, "10.56 MiB fr"), "free", sz(10.56, MiB), -1, -1},
		{"free before its space", cutAt(gen1, "10.56 MiB free;"), "free", sz(10.56, MiB), -1, -1},
		{"reserved cut in its words", cutAt(gen1, "6.60 GiB reser"), "reserved", sz(6.60, GiB), sz(6.60, GiB), -1},
		{"cached cut in its word", cutAt(gen1, "6.60 GiB ") + "ca", "reserved_unallocated", sz(6.60, GiB), sz(6.50, GiB) + sz(6.60, GiB), -1},
		{"1.x figure without its words", cutAt(gen1, "6.60 GiB"), "reserved", -1, -1, -1},
		{"process cut in its words", cutAt(gen2, "memory in u"), "free", sz(1.66, GiB), -1, 1 * GiB},
		{"process cut in its size", cutAt(gen2, "Process 12 has 1.0"), "free", sz(1.66, GiB), -1, -1},
	} {
		rs, err := readText(t, c.name, c.text+"\n", false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(rs.msgs) != 1 || rs.msgs[0].gen != "cut" {
			t.Fatalf("%s: %.200q, want one cut message", c.name, fmt.Sprint(rs.msgs))
		}
		m := rs.msgs[0]
		got, ok := m.sizes[c.field]
		if ok != (c.want >= 0) || ok && !within(got, c.want) {
			t.Errorf("%s: %s %d (%v), want %d", c.name, c.field, got, ok, c.want)
		}
		if r, ok := m.sizes["reserved"]; ok != (c.reserved >= 0) || ok && !within(r, c.reserved) {
			t.Errorf("%s: reserved %d (%v), want %d", c.name, r, ok, c.reserved)
		}
		procs := rs.procs[m.id]
		if (c.proc >= 0) != (len(procs) == 1) || c.proc >= 0 && (procs[0].PID != 12 || !within(procs[0].Bytes, c.proc)) {
			t.Errorf("%s: processes %+v, want process 12 of %d", c.name, procs, c.proc)
		}
	}
}

// foldRow is a message's line and its Ray fold columns (-1: null).
type foldRow struct {
	line, folded, first int64
	text                string
}

// readFolds reads text's messages' fold columns.
func readFolds(t *testing.T, text string) []foldRow {
	t.Helper()
	r := NewReader(strings.NewReader(text), "folds")
	defer r.Release()
	var out []foldRow
	for r.Next() {
		if r.Table() != TableMessages {
			continue
		}
		rec := r.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			f := foldRow{line: rec.Column(MsgLine).(*array.Int64).Value(i), folded: -1, first: -1, text: strings.Clone(rec.Column(MsgText).(*array.String).Value(i))}
			if c := rec.Column(MsgFolded).(*array.Int32); c.IsValid(i) {
				f.folded = int64(c.Value(i))
			}
			if c := rec.Column(MsgFoldedFirst).(*array.Int64); c.IsValid(i) {
				f.first = c.Value(i)
			}
			out = append(out, f)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Ray's "[repeated Nx across cluster]" (ray/_private/ray_logging's
// LogDeduplicator) is read: the tester's vllm-project/vllm issue 15598
// line says Ray folded 7 lines of its kind into it, and the first of the
// kind, which Ray prints on its own, is not in the input (folded 7,
// folded_first null). It was ignored. In the test: the first line of the
// kind from another worker (another pid and GPU: Ray's key drops words
// with digits) before it gives folded_first 1; Ray's once-printed notice
// after the mark is read too; the mark is not part of the message's
// text; a line of another kind before it is no first.
func TestHunt44cRayFolds(t *testing.T) {
	b, err := os.ReadFile(dir + "pastes/s44c_ray_repeated_vllm15598.txt")
	if err != nil {
		t.Fatal(err)
	}
	folded := strings.TrimRight(string(b), "\n")
	plain := strings.TrimSuffix(folded, " [repeated 7x across cluster]")
	first := strings.NewReplacer("pid=206994", "pid=206993", "GPU 6", "GPU 2").Replace(plain)
	other := strings.Replace(plain, "Tried to allocate", "Could not allocate, tried", 1)
	notice := " (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication for more options.)"
	for _, c := range []struct {
		name, text string
		want       []foldRow // text unchecked
	}{
		{"tester", folded + "\n", []foldRow{{1, 7, -1, ""}}},
		{"first shown", first + "\n" + folded + "\n", []foldRow{{1, -1, -1, ""}, {2, 7, 1, ""}}},
		{"with notice", folded + notice + "\n", []foldRow{{1, 7, -1, ""}}},
		{"another kind before", other + "\n" + folded + "\n", []foldRow{{1, -1, -1, ""}, {2, 7, -1, ""}}},
	} {
		got := readFolds(t, c.text)
		if len(got) != len(c.want) {
			t.Fatalf("%s: %d messages, want %d", c.name, len(got), len(c.want))
		}
		for i, g := range got {
			if w := c.want[i]; g.line != w.line || g.folded != w.folded || g.first != w.first || strings.Contains(g.text, "repeated") {
				t.Errorf("%s: message %d line %d folded %d first %d text %.200q; want %+v", c.name, i, g.line, g.folded, g.first, g.text, w)
			}
		}
	}
}
