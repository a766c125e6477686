package pipeline

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/report"
)

// TestRegistry: the families are asked in the order the registry
// documents (strongest test first, the OOM phrase last: parse/detect's
// order before the registry), and every format gpuleak reads belongs to
// exactly one family.
func TestRegistry(t *testing.T) {
	var names []string
	for _, f := range families {
		names = append(names, f.name)
		if f.sniff == nil || f.analyze == nil {
			t.Errorf("family %s lacks a sniff or an analyze function", f.name)
		}
	}
	want := "pytorch-snapshot pytorch-profiler-trace pytorch-memory-timeline compute-sanitizer nvml pytorch-text"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("families asked in order %q, want %q", got, want)
	}
	all := []parse.Format{parse.FormatPyTorchSnapshot, parse.FormatSanitizer, parse.FormatSanitizerXML,
		parse.FormatNvidiaSmiQueryGPU, parse.FormatNvidiaSmiQueryApps, parse.FormatNvidiaSmiDmon, parse.FormatNvidiaSmiPmon,
		parse.FormatPynvmlJSONL, parse.FormatGpustatJSON, parse.FormatDCGMPrometheus, parse.FormatNvidiaSmiText, parse.FormatGpustatText,
		parse.FormatOOMText, parse.FormatMemorySummary, parse.FormatMemoryStats,
		parse.FormatKinetoTrace, parse.FormatMemoryTimeline, parse.FormatMemoryTimelineRaw, parse.FormatMemoryTimelineHTML}
	n := 0
	for _, f := range families {
		n += len(f.formats)
	}
	if n != len(all) || len(byFormat) != len(all) {
		t.Errorf("the families claim %d formats (%d distinct), want the %d gpuleak reads", n, len(byFormat), len(all))
	}
	for _, ft := range all {
		if byFormat[ft] == nil {
			t.Errorf("format %s has no family", ft)
		}
	}
}

// TestDetectOrder: where two families' tests both match, the one asked
// first wins. A compute-sanitizer log and nvidia-smi's table that go on
// to print an OOM message are theirs, not the OOM text family's (whose
// test, a phrase anywhere, would claim them if asked first).
func TestDetectOrder(t *testing.T) {
	oom := "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 GiB of which 1.06 GiB is free.\n"
	for path, want := range map[string]parse.Format{
		"../testdata/sanitizer/leak_full.txt":                 parse.FormatSanitizer,
		"../testdata/nvml/pub_pytorch910_nvidia_smi.txt":      parse.FormatNvidiaSmiText,
		"../testdata/pytorch/memory_summary.txt":              parse.FormatMemorySummary,
		"../testdata/nvml/leak_exit_nvidia_smi_q_memory.txt":  parse.FormatNvidiaSmiText,
		"../testdata/pytorch/oom_other_process_traceback.txt": parse.FormatOOMText,
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		head := append(data[:min(len(data), 8<<10):min(len(data), 8<<10)], oom...)
		if got := Detect(head); got != want {
			t.Errorf("%s with an OOM message after it: %q, want %q", path, got, want)
		}
	}
}

func TestHeaderlessCSVNeedsFields(t *testing.T) {
	head := []byte("0, 1024, 81920\n1, 2048, 81920\n") // index, memory.used, memory.total: no timestamp to recognise
	var o Options
	if got := o.detect(head); got != parse.FormatUnknown {
		t.Errorf("header-less CSV without --fields: %q, want it unclaimed", got)
	}
	o.NVML.Fields = []string{"index", "memory.used", "memory.total"}
	if got := o.detect(head); got != parse.FormatNvidiaSmiQueryGPU {
		t.Errorf("header-less CSV with --fields %v: %q, want %q", o.NVML.Fields, got, parse.FormatNvidiaSmiQueryGPU)
	}
}

func testOptions(t *testing.T, use Use) Options {
	t.Helper()
	filter, err := callsite.NewFrameFilter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Use: use, Version: "test", Filter: filter, MinKept: 4}
}

// TestRunProgress: the injected progress callback starts once per input,
// with its name and size, and each start is stopped.
func TestRunProgress(t *testing.T) {
	paths := []string{"../testdata/pytorch/leak_train_loop.pickle", "../testdata/pytorch/oom_error.txt"}
	o := testOptions(t, Analyze)
	var started []string
	stopped := 0
	o.Progress = func(name string, size int64, read func() int64) func() {
		st, err := os.Stat(name)
		if err != nil || size != st.Size() {
			t.Errorf("progress of %s: size %d, want the file's (%v)", name, size, err)
		}
		started = append(started, name)
		return func() {
			if read() <= 0 {
				t.Errorf("%s: stopped with no byte read", name)
			}
			stopped++
		}
	}
	res, err := Run(context.Background(), o, paths)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(started, ",") != strings.Join(paths, ",") || stopped != len(paths) {
		t.Errorf("progress started for %q, stopped %d times: want each of %q once", started, stopped, paths)
	}
	if res.Unread != nil || len(res.Report.Inputs) != 2 || res.Report.FindingsTotal != len(res.Report.Findings) {
		t.Fatalf("unread %v, %d inputs, %d of %d findings", res.Unread, len(res.Report.Inputs), len(res.Report.Findings), res.Report.FindingsTotal)
	}
	// The OOM of oom_error.txt is a finding of the run, made from all
	// inputs after they are read (the cross-input state Run owns).
	oom := 0
	for _, f := range res.Report.Findings {
		if f.Kind == report.KindOOM {
			oom++
		}
	}
	if oom == 0 {
		t.Error("no oom finding from the log's out-of-memory message")
	}
}

// TestRunUnread: an input that cannot be read costs only itself when
// there are others; alone, or with every other also unread, it is an
// error and no result.
func TestRunUnread(t *testing.T) {
	good, missing := "../testdata/pytorch/oom_error.txt", "../testdata/no-such-input"
	for _, use := range []Use{Analyze, Postmortem} {
		res, err := Run(context.Background(), testOptions(t, use), []string{missing, good})
		var ie *InputError
		if err != nil || !errors.As(res.Unread, &ie) || len(res.Report.Inputs) != 2 || res.Report.Inputs[0].Error == "" || res.Report.Inputs[1].Error != "" {
			t.Fatalf("use %d: err %v, result %+v: want the good input reported and the missing one listed with its error", use, err, res)
		}
		for _, paths := range [][]string{{missing}, {missing, missing + "2"}} {
			res, err := Run(context.Background(), testOptions(t, use), paths)
			if res != nil || !errors.As(err, &ie) {
				t.Errorf("use %d, %q: result %v, error %v: want an InputError and no result", use, paths, res, err)
			}
		}
	}
	// gpuleak trend stops at the first input it cannot read.
	res, err := Run(context.Background(), testOptions(t, Trend), []string{"../testdata/nvml/query_gpu.csv", missing})
	var ie *InputError
	if res != nil || !errors.As(err, &ie) {
		t.Errorf("trend: result %v, error %v: want an InputError", res, err)
	}
}

// TestRunUses: one input, read for each use as its family says.
func TestRunUses(t *testing.T) {
	snap := "../testdata/pytorch/leak_train_loop.pickle"
	_, err := Run(context.Background(), testOptions(t, Trend), []string{snap})
	if err == nil || !strings.Contains(err.Error(), "not an NVML sample log: use gpuleak analyze") {
		t.Errorf("trend of a snapshot: %v, want it refused", err)
	}
	res, err := Run(context.Background(), testOptions(t, Trend), []string{"../testdata/nvml/query_gpu.csv"})
	if err != nil || len(res.Report.Findings) == 0 || res.Report.Findings[0].Kind != report.KindTrend {
		t.Fatalf("trend of an nvidia-smi log: %v, %+v: want trend findings", err, res)
	}
	// For the postmortem, an NVML log gives processes, not findings; the
	// snapshot's leak analysis gives no finding either, only OOMs do.
	res, err = Run(context.Background(), testOptions(t, Postmortem), []string{snap, "../testdata/nvml/query_apps.csv"})
	if err != nil || len(res.Report.Inputs) != 2 {
		t.Fatalf("postmortem: %v, %+v", err, res)
	}
	for _, f := range res.Report.Findings {
		if f.Kind != report.KindOOM && f.Kind != report.KindFragmentation {
			t.Errorf("postmortem finding of kind %s", f.Kind)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := testOptions(t, Analyze)
	o.Progress = func(string, int64, func() int64) func() {
		t.Error("an input was read after the context was done")
		return func() {}
	}
	if _, err := Run(ctx, o, []string{"../testdata/pytorch/oom_error.txt"}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
