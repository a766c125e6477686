package report

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/sanitizer"
)

// Records alike but for their addresses, offsets and threads are one error
// counted N times (rapidsai/cudf#8873's two initcheck reads, at 0x150 by
// thread (0,0,0) and at 0x290 by thread (1,0,0)): the thread and details
// shown are the first record's, and the line says so. Before, "(2 times)"
// after thread (0,0,0) read as the same thread twice.
func TestF48sMergedErrorSaysFirstShown(t *testing.T) {
	e := sanitizer.Error{Kind: "uninitialized", Message: "Uninitialized __global__ memory read of size 1 bytes",
		Function: "count_set_bits_kernel", Kernel: "count_set_bits_kernel", Thread: "(0,0,0)", Block: "(0,0,0)",
		Details: []string{"Address 0x7fc406200400"}, Count: 2}
	if m := toolErrorMessage(e); !strings.Contains(m, "(2 times; the first's thread and details shown)") {
		t.Errorf("message %q", m)
	}
	e.Thread, e.Details = "", nil
	if m := toolErrorMessage(e); !strings.HasSuffix(m, "(2 times)") {
		t.Errorf("message %q: nothing of one record shown, nothing to say", m)
	}
}

// A leak site's frame is a host frame: its file:line comes from -g, not
// -lineinfo (device code's). In a shared library (NVIDIA/TensorRT-RTX#14:
// tensorrt_rtx_1_1.dll, NVIDIA's own) it is the program's to rebuild only
// if the program builds that library. Before, both said "rebuild with
// nvcc -lineinfo or -g".
func TestF48sNoLineInfoAdvice(t *testing.T) {
	s := sanitizer.Site{Kind: callsite.Leak, Bytes: 4, Count: 1, NoLineInfo: true,
		Frame: callsite.Frame{Name: "getBuilderPluginRegistry@0x7fff4b3f6035", Filename: `C:\x\tensorrt_rtx_1_1.dll`}}
	s.Stack = []callsite.Frame{s.Frame}
	if m := sanitizerSiteMessage(s); !strings.Contains(m, "the shared library tensorrt_rtx_1_1.dll; if it is one the program builds, rebuild it with -g") || strings.Contains(m, "lineinfo") {
		t.Errorf("message %q", m)
	}
	s.Frame = callsite.Frame{Name: "main@0x89bb", Filename: "cs-writeValidMem"}
	s.Stack = []callsite.Frame{s.Frame}
	if m := sanitizerSiteMessage(s); !strings.Contains(m, "rebuild the host code with -g") || strings.Contains(m, "lineinfo") {
		t.Errorf("message %q", m)
	}
}
