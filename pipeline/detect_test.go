package pipeline

import (
	"os"
	"testing"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/kineto"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorch"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

func TestDetect(t *testing.T) {
	cases := map[string]parse.Format{
		"../testdata/pytorch/leak_train_loop.pickle":                          pytorch.FormatSnapshot,
		"../testdata/pytorch/repickled/model_reload.p0.pickle":                pytorch.FormatSnapshot,
		"../testdata/pytorch/repickled/model_reload.p1.pickle":                pytorch.FormatSnapshot,
		"../testdata/pytorch/protocol5.pickle.gz":                             pytorch.FormatSnapshot, // after parse.Open removes gzip
		"../testdata/pytorch/oom_error.txt":                                   pytorchtext.FormatOOMMessage,
		"../testdata/pytorch/oom_other_process_traceback.txt":                 pytorchtext.FormatOOMMessage,
		"../testdata/pytorch/memory_summary.txt":                              pytorchtext.FormatMemorySummary,
		"../testdata/pytorch/memory_stats_2.json":                             pytorchtext.FormatMemoryStats,
		"../testdata/pytorch/kineto_trace.json":                               kineto.FormatTrace,
		"../testdata/pytorch/memory_timeline.json":                            kineto.FormatMemoryTimeline,
		"../testdata/kineto/profile_keep_outputs_trace.json.gz":               kineto.FormatTrace,
		"../testdata/kineto/profile_keep_outputs_memory_timeline.raw.json.gz": kineto.FormatMemoryTimelineRaw,
		// traceEvents at byte 72,686, after a distributedInfo of 14
		// process groups: Kineto's first keys say it is a trace.
		"../testdata/kineto/s31_trace_big_distinfo.json.gz": kineto.FormatTrace,
		"../testdata/README.md":                             parse.FormatUnknown,
		// Text starting with "(" is never a protocol-0 pickle: vLLM's
		// per-line "(VllmWorkerProcess pid=N)" prefix, and "segments" in it.
		"../testdata/pytorch/pastes/pt2.x_pidns_vllm15039.txt":   pytorchtext.FormatOOMMessage,
		"../testdata/pytorch/pastes/pt2.x_zero_bytes_aria24.txt": pytorchtext.FormatOOMMessage,
		// Session 42: a memory timeline of one point; nvidia-smi -q -x;
		// ansible -o's one line per host.
		"../testdata/kineto/timeline_one_point.json":                           kineto.FormatMemoryTimeline,
		"../testdata/nvml/h200_q_x_process.xml":                                nvml.FormatNvidiaSmiXML,
		"../testdata/nvml/fleet_ansible_o_query_gpu.txt":                       nvml.FormatQueryGPU,
		"../testdata/nvml/field/nvmolkit28_wsl_table_581_procs_header_cut.txt": nvml.FormatNvidiaSmiText,
	}
	for path, want := range cases {
		in, err := parse.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		head, err := in.Head()
		if err != nil {
			t.Fatal(err)
		}
		if got := Detect(head); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
		in.Close()
	}
	if Detect(nil) != parse.FormatUnknown {
		t.Error("empty input recognised")
	}
}

// FuzzDetect: any head is claimed by at most one family, never with a
// panic, and what Detect names is a format some family reads.
func FuzzDetect(f *testing.F) {
	for _, p := range []string{"../testdata/pytorch/oom_error.txt", "../testdata/pytorch/memory_summary.txt", "../testdata/pytorch/memory_stats_2.json",
		"../testdata/pytorch/kineto_trace.json", "../testdata/pytorch/memory_timeline.json", "../testdata/sanitizer/leak_save.xml",
		"../testdata/sanitizer/leak_full.txt", "../testdata/nvml/query_gpu.csv", "../testdata/nvml/dmon.txt", "../testdata/nvml/pynvml.jsonl"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 4096)])
	}
	f.Add([]byte("\x80\x04\x95"))
	f.Fuzz(func(t *testing.T, head []byte) {
		got := Detect(head)
		if got != parse.FormatUnknown && byFormat[got] == nil {
			t.Fatalf("Detect named %q, which no family reads", got)
		}
		if again := Detect(head); again != got {
			t.Fatalf("Detect gave %q, then %q", got, again)
		}
	})
}
