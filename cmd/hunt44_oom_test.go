package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// Session 44 (testdata/README.md, "Session 44").

// A log is labelled by whose out-of-memory messages it holds. Every text
// log was "pytorch-oom-message" before, a TensorFlow ResourceExhaustedError
// or a JAX RESOURCE_EXHAUSTED log too. Now a log with another framework's
// message is "oom-log" and oom_printers names the framework (the form's
// source: op_kernel.cc's "OOM when allocating tensor" is TensorFlow's,
// tf_allocator_adapter.cc's "Out of memory while trying to allocate" after
// RESOURCE_EXHAUSTED is XLA's, system_allocator.cc's "Out of memory error
// on GPU" PaddlePaddle's, bfc_arena.cc's ONNX Runtime's, worker.py's "No
// available memory for the cache blocks" vLLM's, TensorRT's
// "Cuda Runtime (out of memory)"); a PyTorch log keeps its label, with
// printers ["PyTorch"]. A log holding both (the PyTorch paste followed by
// the TensorFlow one) holds another framework's: oom-log, both named in
// order. The oom gate still counts an oom-log's OOM.
func TestHunt44LogLabelNamesThePrinter(t *testing.T) {
	p := td + "pytorch/pastes/"
	for _, c := range []struct {
		path, format string
		printers     []string
	}{
		{p + "tf1_see_above_segan42.txt", "oom-log", []string{"TensorFlow"}},
		{p + "jax_afprofile8_resource_exhausted.log", "oom-log", []string{"XLA"}},
		{p + "paddle_title_paddleocr7091.txt", "oom-log", []string{"PaddlePaddle"}},
		{p + "ort_bfc_backtick_v100_onnxruntime9939.txt", "oom-log", []string{"ONNX Runtime"}},
		{p + "kvcache_vllm_compose_10439.txt", "oom-log", []string{"vLLM"}},
		{p + "trt7_safe_runtime_tensorrtinference155.txt", "oom-log", []string{"TensorRT"}},
		{p + "pt2.x_pytorch16417.txt", "pytorch-oom-message", []string{"PyTorch"}},
		{p + "hip_comfyui9529.txt", "pytorch-oom-message", []string{"PyTorch"}},
	} {
		code, out, errOut := run(t, nil, "oom", "--format", "json", c.path)
		var r report.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Inputs) != 1 {
			t.Fatalf("%s: exit %d, stderr %.200q, err %v", c.path, code, errOut, err)
		}
		in := r.Inputs[0]
		if in.Format != c.format || !slices.Equal(in.OOMPrinters, c.printers) {
			t.Errorf("%s: format %q, printers %q; want %q, %q", filepath.Base(c.path), in.Format, in.OOMPrinters, c.format, c.printers)
		}
		for _, f := range r.Findings {
			if f.Source != c.format {
				t.Errorf("%s: finding source %q; want %q", filepath.Base(c.path), f.Source, c.format)
			}
		}
	}
	_, out, _ := run(t, nil, "oom", p+"tf1_see_above_segan42.txt")
	if want := "tf1_see_above_segan42.txt: oom-log (out-of-memory messages of TensorFlow)"; !strings.Contains(out, want) {
		t.Errorf("table: %.200q; want %q", out, want)
	}

	both := filepath.Join(t.TempDir(), "both.log")
	var text []byte
	for _, f := range []string{"pt2.x_pytorch16417.txt", "tf1_see_above_segan42.txt"} {
		b, err := os.ReadFile(p + f)
		if err != nil {
			t.Fatal(err)
		}
		text = append(append(text, b...), '\n')
	}
	if err := os.WriteFile(both, text, 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ = run(t, nil, "oom", "--format", "json", both)
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Inputs) != 1 {
		t.Fatalf("both.log: %v %.200q", err, out)
	}
	if in := r.Inputs[0]; in.Format != "oom-log" || !slices.Equal(in.OOMPrinters, []string{"PyTorch", "TensorFlow"}) {
		t.Errorf("both.log: format %q, printers %q; want oom-log, [PyTorch TensorFlow]", in.Format, in.OOMPrinters)
	}

	if code, out, errOut := run(t, nil, "analyze", "--fail-on", "oom", p+"tf1_see_above_segan42.txt"); code != 1 || !strings.Contains(out+errOut, "tripped") {
		t.Errorf("TensorFlow log --fail-on oom: exit %d, stderr %.200q; want 1, tripped", code, out+errOut)
	}
}

// A memory_stats() dict printed on one line longer than the 1 MiB read
// of one (synthetic, the shape of the session-43 tester's d5_huge.log:
// memory_stats()'s keys, then made-up ones) was "partial: the dict broke
// off at line 1", though nothing was cut: it now says the dict is longer
// than the bound and was read to line 1, and JSON gives the bound.
func TestHunt44LongStatsDictIsNotCalledCut(t *testing.T) {
	var b strings.Builder
	b.WriteString(`INFO mem {"allocated_bytes.all.current": 1073741824, "num_ooms": 0`)
	for i := 0; b.Len() < 1<<20+4096; i++ {
		fmt.Fprintf(&b, `, "x.%d.current": %d`, i, i)
	}
	b.WriteString("}\n")
	path := filepath.Join(t.TempDir(), "long.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ := run(t, nil, "oom", path)
	if !strings.Contains(out, "partial: the dict is longer than the 1.0 MiB read of one: read to line 1, the rest not") || strings.Contains(out, "broke off") {
		t.Errorf("table: %.300q", out)
	}
	_, out, _ = run(t, nil, "oom", "--format", "json", path)
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Inputs) != 1 || len(r.Inputs[0].AllocatorStats) != 1 {
		t.Fatalf("json: %v %.200q", err, out)
	}
	if s := r.Inputs[0].AllocatorStats[0]; s.PartialBoundBytes != 1<<20 || s.PartialAtLine != 1 {
		t.Errorf("json: partial_bound_bytes %d, partial_at_line %d; want %d, 1", s.PartialBoundBytes, s.PartialAtLine, 1<<20)
	}
}

// gpuleak trend refuses a log with an OOM message, naming what it is: a
// TensorFlow log was "a pytorch-oom-message input"; its start is now read
// for whose messages it holds, as gpuleak oom labels it. A PyTorch log
// keeps its name.
func TestHunt44TrendNamesTheLogsPrinter(t *testing.T) {
	p := td + "pytorch/pastes/"
	for _, c := range []struct{ path, want string }{
		{p + "tf1_see_above_segan42.txt", "an oom-log input (by its content), not an NVML sample log"},
		{td + "pytorch/oom_error.txt", "a pytorch-oom-message input (by its content), not an NVML sample log"},
	} {
		code, _, errOut := run(t, nil, "trend", c.path)
		if code != ExitInput || !strings.Contains(errOut, c.want) {
			t.Errorf("trend %s: exit %d, stderr %.200q; want %d, %q", filepath.Base(c.path), code, errOut, ExitInput, c.want)
		}
	}
}
