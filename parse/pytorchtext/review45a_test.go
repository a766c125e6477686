package pytorchtext

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Session 45 review of the held messages (NCCL's, XLA's, TensorFlow's BFC
// allocator's, a wrapped message) against Ray's folds (testdata/README.md,
// "Review of session 44's OOM text (session 45a)").

// rayLabel is the worker label of the tester's vLLM line
// (s44c_ray_repeated_vllm15598.txt); rayMark Ray's fold mark.
const (
	rayLabel = "(RayWorkerWrapper pid=206994, ip=192.168.10.25) "
	rayMark  = " [repeated 7x across cluster]"
)

// ncclLines returns NVIDIA/nccl#1235's "Cuda failure" WARN and the
// calloc WARN NCCL logs right after it (lines 5 and 7 of
// nccl_warn_cuda_oom_nccl1235.txt).
func ncclLines(t *testing.T) (warn, calloc string) {
	t.Helper()
	b, err := os.ReadFile(dir + "pastes/nccl_warn_cuda_oom_nccl1235.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.Contains(l, "Cuda failure 'out of memory'"):
			warn = l
		case strings.Contains(l, "Failed to CUDA calloc"):
			calloc = l
		}
	}
	if warn == "" || calloc == "" {
		t.Fatal("the paste lacks its WARN lines")
	}
	return warn, calloc
}

// A message the reader holds for the lines after it (NCCL's status until
// its calloc line, XLA's cudaMallocAsync failure until its free/total
// line, the BFC allocator's failure until TensorFlow's OOM, a message
// wrapped onto the next line) keeps the Ray fold of its own line. Ray
// folds each line of a worker's output on its own, so the lines after a
// folded one are folded too; the reader kept only the last line's fold,
// and the held message, added once the next line was read, lost its
// "[repeated 7x across cluster]": six OOMs Ray had folded went uncounted.
// Each case's message starts on line 1, folded 7 times, the first of its
// kind not in the input (null).
func TestReview45aHeldMessageKeepsRayFold(t *testing.T) {
	warn, calloc := ncclLines(t)
	xla, err := os.ReadFile(dir + "pastes/h44e_xla_cumemallocasync_skyrl624.txt")
	if err != nil {
		t.Fatal(err)
	}
	xl := strings.SplitN(string(xla), "\n", 3)
	bfc := "2020-03-13 01:30:36.765111: W tensorflow/core/common_runtime/bfc_allocator.cc:419] Allocator (GPU_0_bfc) ran out of memory trying to allocate 34.11MiB (rounded to 35766272)requested by op MatMul"
	for _, c := range []struct {
		name  string
		lines []string
		req   int64 // the request the held message got from its next line; -1: none to check
	}{
		{"NCCL and its calloc line", []string{warn, calloc}, 6291456},
		{"XLA async and its free/total line", []string{xl[0], xl[1]}, 1225195446464},
		{"BFC failure, a folded line after it", []string{bfc, "2020-03-13 01:30:36.765200: I tensorflow/core/common_runtime/bfc_allocator.cc:869] Bin (256): Total Chunks: 1, Chunks in use: 1."}, -1},
		{"a 1.x message wrapped", []string{"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.84 GiB already allocated;", "12.44 MiB free; 9.93 GiB reserved in total by PyTorch)"}, 20 << 20},
	} {
		var text string
		for _, l := range c.lines {
			text += rayLabel + l + rayMark + "\n"
		}
		got := readFolds(t, text)
		if len(got) != 1 {
			t.Errorf("%s: %d messages, want 1", c.name, len(got))
			continue
		}
		if g := got[0]; g.line != 1 || g.folded != 7 || g.first != -1 {
			t.Errorf("%s: line %d folded %d first %d; want line 1 folded 7 first null", c.name, g.line, g.folded, g.first)
		}
		if c.req >= 0 {
			rs, err := readText(t, "x.log", text, false)
			if err != nil || len(rs.msgs) != 1 || rs.msgs[0].sizes["requested"] != c.req {
				t.Errorf("%s: %d messages, %v; want one requesting %d", c.name, len(rs.msgs), err, c.req)
			}
		}
	}
}

// The first line of a kind Ray prints on its own is the first of a
// later folded line of that kind (folded_first) when the reader held its
// message too: NCCL's status, XLA's cudaMallocAsync failure, the BFC
// allocator's failure. It was noted only for a message added on its own
// line or wrapped, so the held one was "not in the input" and the
// report counted one OOM more that no line shows. Each case: the line
// from another worker (pid=206993) on line 1, a line of no OOM, the
// folded line on line 3; want the second message folded 7, first 1.
func TestReview45aHeldMessageIsFirstOfItsKind(t *testing.T) {
	warn, _ := ncclLines(t)
	xla, err := os.ReadFile(dir + "pastes/h44e_xla_cumemallocasync_skyrl624.txt")
	if err != nil {
		t.Fatal(err)
	}
	bfc := "2020-03-13 01:30:36.765111: W tensorflow/core/common_runtime/bfc_allocator.cc:419] Allocator (GPU_0_bfc) ran out of memory trying to allocate 34.11MiB (rounded to 35766272)requested by op MatMul"
	for _, c := range []struct{ name, line string }{
		{"NCCL", warn},
		{"XLA async", strings.SplitN(string(xla), "\n", 2)[0]},
		{"BFC failure", bfc},
	} {
		other := strings.Replace(rayLabel, "pid=206994", "pid=206993", 1)
		text := other + c.line + "\n" + rayLabel + "INFO step done\n" + rayLabel + c.line + rayMark + "\n"
		got := readFolds(t, text)
		if len(got) != 2 {
			t.Errorf("%s: %d messages, want 2", c.name, len(got))
			continue
		}
		if g := got[1]; g.line != 3 || g.folded != 7 || g.first != 1 {
			t.Errorf("%s: line %d folded %d first %d; want line 3 folded 7 first 1", c.name, g.line, g.folded, g.first)
		}
	}
}

// The lines read for a held XLA message (cuMemGetInfo's "Reported by
// CUDA: Free memory/Total memory: F/T" after the cudaMallocAsync
// allocator's failure, the "BufferAssignment stats" after an
// XlaRuntimeError) are read behind the prefix their message's line had,
// as a wrapped message's are (contLine): a collector's timestamp that
// moves on (GitHub Actions', kubectl --timestamps') or Ray's worker label.
// Both readers matched only at the line's start, so behind any prefix the
// free and total memory and the total allocation were lost. The inputs:
// SkyRL#624's first two lines (22635544576 free of 85095874560) and
// AFProfile#8's message and stats (14.44GiB total allocation), each line
// behind the prefix.
func TestReview45aXLANextLinesBehindAPrefix(t *testing.T) {
	read := func(name string, n int) []string {
		b, err := os.ReadFile(dir + name)
		if err != nil {
			t.Fatal(err)
		}
		return strings.SplitN(string(b), "\n", n+1)[:n]
	}
	async := read("pastes/h44e_xla_cumemallocasync_skyrl624.txt", 2)
	stats := read("pastes/h44e_xla_bufferassignment_afprofile8.txt", 9)
	for _, c := range []struct {
		name   string
		prefix func(k int) string
	}{
		{"GitHub Actions timestamps", func(k int) string { return fmt.Sprintf("2024-06-22T15:13:25.%07dZ ", 790000+k*1000) }},
		{"Ray's worker label", func(int) string { return rayLabel }},
	} {
		with := func(lines []string) string {
			var b strings.Builder
			for k, l := range lines {
				b.WriteString(c.prefix(k) + l + "\n")
			}
			return b.String()
		}
		rs, err := readText(t, "async", with(async), false)
		if err != nil || len(rs.msgs) != 1 {
			t.Errorf("%s, cudaMallocAsync: %d messages, %v; want 1", c.name, len(rs.msgs), err)
		} else if sz := rs.msgs[0].sizes; sz["free"] != 22635544576 || sz["total"] != 85095874560 {
			t.Errorf("%s, cudaMallocAsync: sizes %v; want 22635544576 free of 85095874560", c.name, sz)
		}
		rs, err = readText(t, "stats", with(stats), false)
		const want = 1444 * (1 << 30) / 100
		if err != nil || len(rs.msgs) != 1 {
			t.Errorf("%s, BufferAssignment: %d messages, %v; want 1", c.name, len(rs.msgs), err)
		} else if got := XLATotalAllocation(rs.msgs[0].text); got < want-(1<<30)/200 || got > want+(1<<30)/200 {
			t.Errorf("%s, BufferAssignment: total allocation %d, want about %d (14.44 GiB)", c.name, got, int64(want))
		}
	}
}

// TensorFlow's OOM after a BFC allocator's failure is that failure's
// OOM only on the same GPU: "by allocator GPU_0_bfc" after GPU_1_bfc's
// record is another allocator's (two GPUs of one process, or of two
// processes whose logs are interleaved). The reader took any TensorFlow
// OOM as the held failure's and dropped the failure: GPU 1's OOM of
// 35766272 bytes was lost. The lines: session 44's synthetic pair
// (hunt44e_test.go's "then TF's OOM", TF's words from
// tensorflow#47820 and cortexlabs/cortex#853) with the BFC record's
// GPU changed to 1. On the same GPU it stays one OOM.
func TestReview45aBFCFailureOfAnotherGPUIsNotTFsOOM(t *testing.T) {
	const (
		bfc = "2021-09-24 16:22:56.271936: W tensorflow/core/common_runtime/bfc_allocator.cc:243] Allocator (GPU_%d_bfc) ran out of memory trying to allocate 18.00MiB (rounded to 18874368)requested by op Mul\n"
		tf  = "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[1024,4608] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:Mul]\n"
	)
	for _, c := range []struct {
		gpu   int
		lines []int64 // the messages' lines
	}{
		{0, []int64{2}},
		{1, []int64{1, 2}},
	} {
		rs, err := readText(t, "bfc", fmt.Sprintf(bfc, c.gpu)+tf, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, m := range rs.msgs {
			got = append(got, m.line)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.lines) {
			t.Errorf("BFC failure on GPU %d: messages on lines %v, want %v", c.gpu, got, c.lines)
		}
	}
}
