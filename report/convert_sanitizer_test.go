package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/sanitizer"
)

func TestFromSanitizerMessages(t *testing.T) {
	res := &sanitizer.Result{
		Sites: []sanitizer.Site{
			{Kind: callsite.Leak, Bytes: 2 << 18, Count: 2, Sizes: []int64{1 << 18}},
			{Kind: callsite.Retained, Allocator: sanitizer.AllocDevice, Pool: "CuPy's memory pool (SingleDeviceMemoryPool)", Hint: "free_all_blocks()",
				Bytes: 9216, Count: 3, Frame: callsite.Frame{Filename: "cupy_leak.py", Line: 9, Name: "main"},
				Stack: []callsite.Frame{{Filename: "cupy_leak.py", Line: 9, Name: "main"}}},
		},
		Errors: []sanitizer.Error{
			// cuda-memcheck's "Program hit error 11 on CUDA API call to cudaMemcpy".
			{Kind: "api", API: "cudaMemcpy", Result: 11, Count: 2, Frame: callsite.Frame{Filename: "./app", Name: "main"}},
			{Kind: "race", Message: "Error: Race reported between Write access at k()+0x10 in r.cu:7", Count: 1},
		},
		Suppressed: []sanitizer.SuppressedCount{{Rule: "s.txt:2", Records: 2, Bytes: 4096}},
	}
	in, fs, errs := FromSanitizer("x.txt", "compute-sanitizer", []string{"parser says"}, res)
	if got := strings.Join(in.Warnings, "|"); got != "parser says|suppressed by s.txt:2: 2 records (4.0 KiB leaked)" {
		t.Errorf("warnings %q", got)
	}
	if m := fs[0].Message; !strings.HasPrefix(m, "leak: 2 allocations of 256 KiB (512 KiB) never freed, with no stack recorded") || fs[0].Device != nil || fs[0].Allocator != "" {
		t.Errorf("no-stack finding %+v", fs[0])
	}
	if f := fs[1]; f.Kind != KindRetained || !strings.Contains(f.Message, "held at exit by CuPy's memory pool") || !strings.HasSuffix(f.Message, "free_all_blocks()") {
		t.Errorf("retained finding %+v", f)
	}
	if m := errs[0].Message; m != "cudaMemcpy failed with error 11 at main (app) (2 times); check the call's arguments and its return value" {
		t.Errorf("api message %q", m)
	}
	if errs[1].Message != res.Errors[1].Message || errs[1].Launch != nil || errs[1].Stack == nil {
		t.Errorf("race %+v", errs[1])
	}

	var b bytes.Buffer
	r := &Report{Schema: Schema, Inputs: []Input{in}, Findings: fs, Errors: errs}
	if err := Write(&b, Document{Kind: DocAnalysis, Report: r}, FormatJSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Errors) != 2 || back.Findings[1].Allocator != "device" {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
	b.Reset()
	if err := Write(&b, Document{Kind: DocAnalysis, Report: r}, FormatTable, Options{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "Errors reported by the tool (not leaks):\n1. [api] cudaMemcpy failed") || !strings.Contains(out, "at exit") {
		t.Errorf("table:\n%s", out)
	}
}

func TestCleanedCopiesAndEscapes(t *testing.T) {
	dev := 0
	r := &Report{Inputs: []Input{{Path: "a\nb", Warnings: []string{"w\x1b[31m"}}},
		Findings: []Finding{{Kind: KindLeak, Device: &dev, Site: Frame{Function: "f\nROW"}, Stack: []Frame{{Function: "g\r"}}}}}
	c := cleaned(r)
	if c.Inputs[0].Path != `a\nb` || c.Inputs[0].Warnings[0] != `w\x1b[31m` || c.Findings[0].Site.Function != `f\nROW` || c.Findings[0].Stack[0].Function != `g\r` {
		t.Fatalf("not escaped: %+v", c)
	}
	if r.Inputs[0].Path != "a\nb" || r.Findings[0].Stack[0].Function != "g\r" {
		t.Fatal("the original report was changed")
	}
}
