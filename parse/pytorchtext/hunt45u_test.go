package pytorchtext

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/parse"
)

// Session 45, helper u (testdata/README.md, "Repeated messages,
// interleaved ranks (session 45u)"). The inputs are synthetic, in the
// forms of the real pastes the README names.

// progressLines reads the messages table's line and progress_line
// columns of text (0 for a null progress_line).
func progressLines(t *testing.T, text string) (lines, progress []int64) {
	t.Helper()
	mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
	defer mem.AssertSize(t, 0)
	r := NewReader(strings.NewReader(text), "t.log", WithAllocator(mem), WithBatchSize(3))
	defer r.Release()
	for r.Next() {
		if r.Table() != TableMessages {
			continue
		}
		rec := r.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			lines = append(lines, rec.Column(MsgLine).(*array.Int64).Value(i))
			var p int64
			if c := rec.Column(MsgProgressLine).(*array.Int64); c.IsValid(i) {
				p = c.Value(i)
			}
			progress = append(progress, p)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return lines, progress
}

const s45uMsg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.91 GiB memory in use. Of the allocated memory 75.12 GiB is allocated by PyTorch, and 2.10 GiB is reserved by PyTorch but unallocated."

// progress_line is the last line of the message's process that counts
// the run's progress, before it: a step number, the Trainer's
// "'epoch': N", a tqdm bar's "n/total [". Lines with another rank's mark
// are another process's; a traceback's source line ("for step, batch in
// ...", "batch[0]") is no progress line, nor a bar drawn again with the
// count it had (tqdm closing its bar as the exception unwinds).
func TestHunt45uProgressLine(t *testing.T) {
	text := strings.Join([]string{
		"step 1 loss 2.31", // 1
		"Traceback (most recent call last):",
		`  File "train.py", line 40, in <module>`,
		"    for step, batch in enumerate(loader): out = model(batch[0])",
		s45uMsg, // 5: progress line 1
		"{'loss': 0.52, 'learning_rate': 1e-05, 'epoch': 0.12}", // 6
		s45uMsg, // 7: progress line 6
		" 12%|█▏        | 60/500 [00:31<03:50,  1.91it/s]", // 8
		"[rank1]: step 9 loss 1.0",                         // 9
		"[rank0]: " + s45uMsg,                              // 10: line 8 (unmarked), not rank 1's 9
		"[rank1]: " + s45uMsg,                              // 11: line 9
		"loading shard 3 of 4",                             // 12
		s45uMsg,                                            // 13: still line 8
		" 12%|█▏        | 60/500 [00:33<03:51,  1.90it/s]", // 14: the same count drawn again
		s45uMsg, // 15: still line 8
	}, "\n") + "\n"
	lines, progress := progressLines(t, text)
	wantLines := []int64{5, 7, 10, 11, 13, 15}
	wantProgress := []int64{1, 6, 8, 9, 8, 8}
	if len(lines) != len(wantLines) {
		t.Fatalf("messages at lines %v, want %v", lines, wantLines)
	}
	for i := range lines {
		if lines[i] != wantLines[i] || progress[i] != wantProgress[i] {
			t.Errorf("message %d: line %d progress_line %d, want line %d progress_line %d", i, lines[i], progress[i], wantLines[i], wantProgress[i])
		}
	}
}

// Two ranks' wrapped messages whose lines interleave (torchrun's, srun
// -l's and Ray's prefixes, with or without a timestamp before them): each
// is joined from its own rank's lines. The lines are PR 99699's message
// as the tester's torchrun copy wrapped it
// (pastes/s44c_wrapped_rank_pr99699.txt), and a second rank's copy made
// from it (GPU 1, 276.00 MiB asked): 138.00 and 276.00 MiB asked, each
// with 14.12 GiB allocated and 410.41 MiB reserved but unallocated, read
// whole. The old code joined a line only to the message of the line just
// before: each rank's message ended cut at its first line's end.
func TestHunt45uInterleavedRanksWrapped(t *testing.T) {
	body := pr99699Body(t)
	for name, pfx := range map[string]func(rank, i int) string{
		"torchrun": func(rank, _ int) string { return "[rank" + string(rune('0'+rank)) + "]: " },
		"stamped torchrun": func(rank, i int) string {
			return "2024-11-20 14:37:1" + string(rune('0'+i)) + " [rank" + string(rune('0'+rank)) + "]: "
		},
		"srun -l": func(rank, _ int) string { return string(rune('0'+rank)) + ": " },
		"ray": func(rank, _ int) string {
			return "(RayWorkerWrapper pid=20699" + string(rune('0'+rank)) + ", ip=192.168.10.25) "
		},
	} {
		var b strings.Builder
		for i, l := range body {
			other := strings.Replace(strings.Replace(l, "GPU 0", "GPU 1", 1), "138.00 MiB", "276.00 MiB", 1)
			b.WriteString(pfx(0, i) + l + "\n" + pfx(1, i) + other + "\n")
		}
		rs, err := readText(t, name, b.String(), false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != 2 {
			t.Fatalf("%s: %d messages %.200q, want 2", name, len(rs.msgs), fmt.Sprint(rs.msgs))
		}
		for k, m := range rs.msgs {
			if m.line != int64(k+1) || m.gen != "2.x" || m.device != int32(k) || !within(m.sizes["requested"], int64(k+1)*138*MiB) ||
				!within(m.sizes["allocated"], sz(14.12, GiB)) || !within(m.sizes["reserved_unallocated"], sz(410.41, MiB)) {
				t.Errorf("%s: message %d: %.200q", name, k, fmt.Sprint(m))
			}
		}
	}
}

// NCCL's "Failed to CUDA calloc N bytes" (alloc.h) comes only after the
// allocation call failed, right after its CUDACHECK's line naming the
// CUDA error. In NVIDIA/nccl issue 1235's log
// (pastes/h44e_nccl_calloc_nccl1235.txt) with that line cut out, the
// calloc line alone is read as NCCL's OOM of 6291456 bytes on device 3,
// with a warning that the error is not in the text (the old code found
// no OOM: "No out-of-memory error in the inputs"); with the error line
// naming another error ('invalid argument'), it is that failure's, no
// OOM.
func TestHunt45uNCCLCallocAlone(t *testing.T) {
	b, err := os.ReadFile(dir + "pastes/h44e_nccl_calloc_nccl1235.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cut []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, "Cuda failure") {
			cut = append(cut, l)
		}
	}
	rs, err := readText(t, "cut", strings.Join(cut, "\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 1 {
		t.Fatalf("cut: %d messages, want 1", len(rs.msgs))
	}
	if m := rs.msgs[0]; m.gen != "cuda-error" || m.device != 3 || m.sizes["requested"] != 6291456 || Library(m.text) != "NCCL" ||
		!strings.Contains(strings.Join(rs.meta.Warnings.Strings(), "|"), "without the line before it that names the CUDA error") {
		t.Errorf("cut: %.200q, warnings %.200q", fmt.Sprint(m), strings.Join(rs.meta.Warnings.Strings(), "|"))
	}
	other := strings.Replace(string(b), "Cuda failure 'out of memory'", "Cuda failure 'invalid argument'", 1)
	rs, err = readText(t, "other", other, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 0 {
		t.Errorf("another error: %d messages %.200q, want none", len(rs.msgs), fmt.Sprint(rs.msgs))
	}
	// Two threads failing at once, their lines interleaved: two OOMs,
	// each calloc line its own thread's failure's, no third.
	two := "h:1:10 [0] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n" +
		"h:1:11 [1] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n" +
		"h:1:10 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 4096 bytes\n" +
		"h:1:11 [1] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 8192 bytes\n"
	rs, err = readText(t, "two", two, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.msgs) != 2 || rs.msgs[0].device != 0 || rs.msgs[1].device != 1 {
		t.Errorf("two threads: %.200q, want 2 messages", fmt.Sprint(rs.msgs))
	}
}

// pygpu's GpuArrayException on Python 2 prints libgpuarray's string bare
// ("pygpu.gpuarray.GpuArrayException: out of memory", the form of a
// Python 2.7 user's notes; "Out of memory" in releases that capitalise
// it): Theano's OOM, as the Python 3 form b'out of memory' is (the old
// code found none). Theano's start-up line gives the GPU its messages do
// not: "Mapped name None to device cuda1: ..." (gpuarray) and, in Theano
// issue 3748's real paste (pastes/theano_cudandarray_cnmem_disabled_theano3748.txt),
// "Using gpu device 0: GRID K520" (the old back-end); two contexts on two
// devices leave it unknown, as does no such line. Prose that goes on
// after the words is no message.
func TestHunt45uTheanoPython2AndDevice(t *testing.T) {
	real := readFile(t, "pastes/theano_cudandarray_cnmem_disabled_theano3748.txt", false)
	if len(real.msgs) != 1 || real.msgs[0].device != 0 {
		t.Errorf("theano3748: %.200q, want GPU 0", fmt.Sprint(real.msgs))
	}
	tb := "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    f(x)\n"
	for _, c := range []struct {
		name, text string
		device     int32
	}{
		{"mapped cuda1", "Mapped name None to device cuda1: GeForce GTX 1080 (0000:02:00.0)\n" + tb + "pygpu.gpuarray.GpuArrayException: out of memory\n", 1},
		{"capitalised, no device line", tb + "pygpu.gpuarray.GpuArrayException: Out of memory\n", -1},
		{"two contexts", "Mapped name dev0 to device cuda0: Tesla K80 (0000:05:00.0)\nMapped name dev1 to device cuda1: Tesla K80 (0000:06:00.0)\n" + tb + "GpuArrayException: out of memory\n", -1},
		{"default device", "Mapped name None to device cuda: Tesla K80 (0000:05:00.0)\n" + tb + "GpuArrayException: out of memory\n", -1},
	} {
		rs, err := readText(t, c.name, c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.msgs) != 1 || rs.msgs[0].gen != "theano" || rs.msgs[0].device != c.device || len(rs.frames[rs.msgs[0].id]) != 1 {
			t.Errorf("%s: %.200q, want one theano message on device %d with its frame", c.name, fmt.Sprint(rs.msgs), c.device)
		}
	}
	rs, err := readText(t, "prose", "I got GpuArrayException: out of memory when the batch grew\n", false)
	if err != nil || len(rs.msgs) != 0 {
		t.Errorf("prose: %.200q, %v; want no message", fmt.Sprint(rs.msgs), err)
	}
}

// memory_stats() dicts printed by two ranks (torchrun's "[rank0]: ",
// "[rank1]: " before each, a timestamp before that) carry the rank's mark
// as their process, as memory_summary() tables do; a program's own words
// before a dict ("step 3: ") are no process. The old code labelled no
// dict.
func TestHunt45uStatsDictProcess(t *testing.T) {
	dict := `{'allocated_bytes.all.current': 1073741824, 'reserved_bytes.all.current': 2147483648, 'num_ooms': 1}`
	text := "2024-11-20 14:37:16 [rank0]: " + dict + "\n" +
		"2024-11-20 14:37:16 [rank1]: " + dict + "\n" +
		"step 3: " + dict + "\n"
	got := statsProcesses(t, text)
	if len(got) != 3 || got[0] != "[rank0]:" || got[1] != "[rank1]:" || got[2] != "" {
		t.Errorf("processes %q, want [rank0]:, [rank1]: and none", got)
	}
}

// A prefix that only looks like another process's ("step 1: " after a
// wrapped message's "step 0: ") sets the message aside no longer than
// maxParkedLines: it ends as read (cut, its free memory not read), and a
// line with its prefix 70 lines on does not go on it; the messages after
// it come in line order.
func TestHunt45uParkedNotForever(t *testing.T) {
	var b strings.Builder
	b.WriteString("step 0: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which\n")
	for i := 1; i <= maxParkedLines+9; i++ {
		fmt.Fprintf(&b, "step %d: loss 0.1\n", i)
	}
	b.WriteString("step 0: 1.23 GiB is free.\n")
	b.WriteString(s45uMsg + "\n")
	rs, err := readText(t, "steps", b.String(), false)
	if err != nil {
		t.Fatal(err)
	}
	_, free := rs.msgs[0].sizes["free"]
	if len(rs.msgs) != 2 || rs.msgs[0].line != 1 || rs.msgs[0].gen != "cut" || free || rs.msgs[1].line != int64(maxParkedLines+12) {
		t.Errorf("%.200q, want the cut message of line 1, then line %d's", fmt.Sprint(rs.msgs), maxParkedLines+12)
	}
}
