package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// printoutCases are the pastes of testdata/printout/ (README, session 48,
// f48e): what people paste when they ask where their GPU memory went, each
// a printout gpuleak does not read. pos is where the error places it,
// kind what it must call it, record what it must say to record instead.
var printoutCases = []struct {
	file, pos, kind, record string
}{
	{"torchprof16_autograd_profiler_table_cuda_mem.txt", ":2: ", "a PyTorch profiler table (prof.key_averages().table()), not a trace", `prof.export_chrome_trace("trace.json")`},
	{"slime147_ray_prefixed_profiler_table.txt", ":2: ", "a PyTorch profiler table", "profile_memory=True"},
	{"pytorch37775_profiler_table_pt16_input_shapes.txt", ":5: ", "a PyTorch profiler table", "profile_memory=True"},
	{"composer2647_profile_averages_mem_flops.txt", ":1: ", "rows of a PyTorch profiler table", "profile_memory=True"},
	{"kineto_doc_two_memory_events_concatenated_cpu.json", ": byte offset 0: ", "2 [memory] events cut from a PyTorch profiler trace, each the CPU allocator's", "give the whole file"},
	{"hta223_single_cuda_memory_event_trailing_comma.json", ": byte offset 0: ", "1 [memory] event cut from a PyTorch profiler trace, not the trace", "give the whole file"},
	{"nvdiffrast23_dataparallel_memory_prints.txt", ":1: ", "prints of torch.cuda.memory_allocated(), memory_reserved() or their max_ forms", "_record_memory_history(max_entries=100_000)"},
	{"zhsd_memory_prints_and_snapshot_segments_elided.txt", ":2: ", "prints of torch.cuda.memory_allocated()", "_dump_snapshot"},
	{"deepspeed3808_nvidia_smi_and_memory_allocated_megabytes.txt", ":4: ", "prints of torch.cuda.memory_allocated()", "_dump_snapshot"},
	{"maskrcnn182_max_memory_allocated_cached_loop.txt", ":1: ", "columns of numbers without labels", "nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total"},
	{"deepspeed522_see_memory_usage.log", ":1: ", "DeepSpeed's see_memory_usage lines", "_dump_snapshot"},
	{"deepspeed4700_see_memory_usage_ma_small_ca_large.log", ":2: ", "DeepSpeed's see_memory_usage lines", "_dump_snapshot"},
	{"habana34_megatron_rank_memory_mb.log", ":1: ", "Megatron's report_memory lines", "_dump_snapshot"},
	{"optimumhabana89_trainer_log_memory_allocated.txt", ":1: ", "a trainer's logged metrics", "_dump_snapshot"},
	{"peft779_torchtracemalloc_prints.txt", ":1: ", "the PEFT examples' TorchTracemalloc prints", "_dump_snapshot"},
	{"torchtune2406_mps_peak_memory_growing_per_step.txt", ":1: ", "torchtune's memory stats", "_dump_snapshot"},
	{"torchtitan3393_rank0_step_memory_gib_pct.log", ":1: ", "torchtitan's step lines", "_dump_snapshot"},
	{"mmdet3d804_mmcv_memory_field_log.txt", ":1: ", "MMCV/MMEngine log lines", "_dump_snapshot"},
	{"detectron2_2958_max_mem_events.txt", ":1: ", "detectron2's metric lines", "_dump_snapshot"},
	{"deeplabcut3077_epoch_gpu_reserved.txt", ":1: ", "a training log's GPU memory figures", "nvidia-smi --query-gpu="},
	{"memlab47_line_profiler_vgg.txt", ":3: ", "pytorch_memlab's line profiler report", "_dump_snapshot"},
	{"linememprofiler_memory_profiler_cpu_table.txt", ":1: ", "memory_profiler's line-by-line report", "resident host memory"},
	{"oldpan_gpu_mem_track3_tensor_listing.txt", ":1: ", "gpu_mem_track's listing of live tensors", "_dump_snapshot"},
	{"sglang_blog_memviz_stack_copy.txt", ":1: ", "a stack copied from memory_viz", "the snapshot the page was drawn from"},
	{"minkowski359_list_gpu_processes_output.txt", ":2: ", "torch.cuda.list_gpu_processes() output", "--query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_memory"},
	{"pytorch193400_reserved_growth_markdown_table.md", ":9: ", "memory figures in prose or a Markdown table", "_dump_snapshot"},
	{"pytorch1509_prose_consumption_per_iteration.md", ":1: ", "memory figures in prose or a Markdown table", "_dump_snapshot"},
}

// Each printout is an input error (exit 2, as any input gpuleak cannot
// read) that names the file and line, what the input is and what to
// record instead, for analyze and trend. Before, every one was the
// generic "unrecognised input format: not a PyTorch memory snapshot, ...,
// a PyTorch profiler trace ..." (a profiler table among them).
func TestPrintoutsNamedWithWhatToRecord(t *testing.T) {
	dir := td + "printout/"
	for _, c := range printoutCases {
		for _, cmd := range []string{"analyze", "trend"} {
			code, out, errOut := run(t, nil, cmd, dir+c.file)
			if code != ExitInput || out != "" {
				t.Errorf("%s %s: exit %d, stdout %q; want exit %d and no report", cmd, c.file, code, out, ExitInput)
			}
			if want := dir + c.file + c.pos + c.kind; !strings.Contains(errOut, want) {
				t.Errorf("%s %s: stderr %q\nwant %q", cmd, c.file, errOut, want)
			}
			if !strings.Contains(errOut, c.record) {
				t.Errorf("%s %s: stderr %q\nwants what to record: %q", cmd, c.file, errOut, c.record)
			}
			if strings.Contains(errOut, "unrecognised") {
				t.Errorf("%s %s: stderr %q calls it unrecognised", cmd, c.file, errOut)
			}
		}
	}
}

// gpuleak report lists each printout among its skipped files with the
// words analyze gives it, not "its content is no format gpuleak reads".
func TestReportSkipsPrintoutsWithWhatToRecord(t *testing.T) {
	root := t.TempDir()
	for _, c := range printoutCases {
		abs, err := filepath.Abs(td + "printout/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(root, c.file)); err != nil {
			t.Fatal(err)
		}
	}
	_, out, errOut := run(t, nil, "report", "-o", "-", "--format", "json", root)
	var d report.Daily
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("report JSON: %v; stderr %q", err, errOut)
	}
	if len(d.Skipped) != len(printoutCases) {
		t.Fatalf("%d skipped, want %d: %+v", len(d.Skipped), len(printoutCases), d.Skipped)
	}
	for _, s := range d.Skipped {
		var want string
		for _, c := range printoutCases {
			if filepath.Base(s.Path) == c.file {
				want = c.kind
			}
		}
		if want == "" || !strings.Contains(s.Reason, want) || strings.Contains(s.Reason, "no format gpuleak reads") {
			t.Errorf("%s skipped for %q; want %q", s.Path, s.Reason, want)
		}
	}
}

// With --fail-on oom, text no format claims is read as the log of a run
// without an OOM, and a log of per-step memory prints still is: the gate
// passes, as before.
func TestPrintoutLogPassesOOMGate(t *testing.T) {
	code, _, errOut := run(t, nil, "analyze", "--fail-on", "oom", td+"printout/deepspeed522_see_memory_usage.log")
	if code != 0 {
		t.Errorf("exit %d, want 0; stderr %q", code, errOut)
	}
}

// Where a printout's lines give figures of one name over and over, the
// error describes each series as printed (first and last value with their
// lines, how often it went up and down, its change, and per step where
// the lines number steps): evidence, not a verdict; the exit is still 2.
func TestPrintoutSeriesAsPrinted(t *testing.T) {
	cases := []struct{ file, want string }{
		// torchtune#2406: peak_memory_alloc grows about a GiB a step while
		// peak_memory_active stays.
		{"torchtune2406_mps_peak_memory_growing_per_step.txt", "peak_memory_alloc 52.001708984375 (line 1) to 57.90928649902344 (line 6), 6 readings, up 5 times and down 0, +5.908 in all (steps 1 to 6: +1.182 a step)"},
		{"torchtune2406_mps_peak_memory_growing_per_step.txt", "peak_memory_active 47.32469987869263 (line 1) to 47.32488775253296 (line 6), 6 readings, up 1 time and down 1, +0.000 in all"},
		// DeepSpeed#4700: memory_allocated falls to 0.58 GB while the
		// cache keeps 26.71 GB.
		{"deepspeed4700_see_memory_usage_ma_small_ca_large.log", "MA 26.38 GB (line 2) to 0.58 GB (line 9), 3 readings, up 0 times and down 1, -25.80 GB in all"},
		{"deepspeed4700_see_memory_usage_ma_small_ca_large.log", "CA 26.71 GB (line 2) to 26.71 GB (line 9), 3 readings, up 0 times and down 0, +0.00 GB in all"},
		// Megatron's lines, one series per rank.
		{"habana34_megatron_rank_memory_mb.log", ""},
		{"detectron2_2958_max_mem_events.txt", "max_mem 14728 M (line 1) to 14728 M (line 3), 3 readings, up 0 times and down 0, +0 M in all (iterations 79 to 119: +0.0 M an iteration)"},
		// Two devices, four figures each, none changing over iterations
		// 8 to 10: four described, in the order they came, and a count.
		{"nvdiffrast23_dataparallel_memory_prints.txt", "torch.cuda.memory_allocated(0) 318986240 (line 9) to 318986240 (line 37), 3 readings, up 0 times and down 0, +0 in all (iterations 8 to 10: +0.0 an iteration); and 4 more series"},
		// A series that changed comes before those that did not.
		{"zhsd_memory_prints_and_snapshot_segments_elided.txt", "as printed: max_memory_allocated 0.0 MiB (line 2) to 1546.0 MiB (line 12)"},
	}
	for _, c := range cases {
		code, _, errOut := run(t, nil, "analyze", td+"printout/"+c.file)
		if code != ExitInput {
			t.Errorf("%s: exit %d, want %d", c.file, code, ExitInput)
		}
		if c.want == "" {
			// One reading per rank: no series to describe.
			if strings.Contains(errOut, "its figures") {
				t.Errorf("%s: stderr %q describes a series of one reading", c.file, errOut)
			}
			continue
		}
		if !strings.Contains(errOut, "its figures, as printed: ") || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: stderr %q\nwant %q", c.file, errOut, c.want)
		}
	}
}

// A snapshot saved with json.dump is read as the pickle it was dumped
// from: the same report, word for word but its path (adam_few_steps: a
// trace with timestamps, allocator_settings and external_annotations;
// yiyi: a field OOM snapshot, 460 blocks of one site). Before, it was an
// unrecognised input format.
func TestJSONSnapshotReadAsItsPickle(t *testing.T) {
	cases := []struct{ json, pickle, want string }{
		{"pytorch/adam_few_steps_json_dumped.json.gz", "pytorch/adam_few_steps.pickle", ""},
		{"pytorch/yiyi_oom_snapshot_json_dumped.json.gz", "", "11 GiB active in 460 blocks, 11 GiB reserved in 176 segments, 1 trace entry"},
	}
	for _, c := range cases {
		code, out, errOut := run(t, nil, "analyze", td+c.json)
		if code != 0 || !strings.Contains(out, ": pytorch-snapshot; ") || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a snapshot read, %q", c.json, code, out, errOut, c.want)
		}
		if c.pickle == "" {
			continue
		}
		for _, args := range [][]string{{"analyze", "--format", "json"}, {"oom"}} {
			code, out, _ := run(t, nil, append(args, td+c.json)...)
			wcode, want, _ := run(t, nil, append(args, td+c.pickle)...)
			if out = strings.ReplaceAll(out, td+c.json, td+c.pickle); code != wcode || out != want {
				t.Errorf("%v %s: exit %d, output differs from the pickle's (exit %d):\n%s\nwant\n%s", args, c.json, code, wcode, out, want)
			}
		}
	}
}

// A snapshot's JSON cut short is an input error at the byte of the JSON
// where it stops, not a snapshot read in silence or "unrecognised".
func TestJSONSnapshotCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snap.json")
	doc := `{"segments": [{"device": 0, "address": 139780000000000, "total_size": 2097152, "allocated_size": 512, "blocks": [{"size": 512, "state": "active_allocated"`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, nil, "analyze", path)
	if want := fmt.Sprintf("the snapshot's JSON ends at byte offset %d of it, inside its value (cut short, or not written whole): unexpected EOF", len(doc)); code != ExitInput || !strings.Contains(errOut, path) || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, ExitInput, want)
	}
}
