package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// A program's own cuBLAS handle never destroyed leaks the handle's memory:
// the advice is cublasDestroy, not cudaFree of a pointer the program never
// had. The H200 recording (cublas_leak.cu:17 calls cublasCreate once:
// its three allocations, 67,108,864 + 1,024 + 131,072 bytes) and
// ggml-org/llama.cpp#5576's paste (ggml_init_cublas, ggml-cuda.cu:8008:
// 8,388,608 bytes; the allocation call is not symbolized, so the memory's
// kind is not known).
func TestSanitizerLibraryHandleLeakAdvice(t *testing.T) {
	for _, tt := range []struct {
		file  string
		bytes int64
		count int
		site  string
		line  int
	}{
		{"san_cublas_no_destroy.txt", 67108864 + 1024 + 131072, 3, "main", 17},
		{"pub_llamacpp5576_cublas_create.txt", 8388608, 1, "ggml_init_cublas.part.0", 8008},
	} {
		code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", "../testdata/sanitizer/"+tt.file)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", tt.file, code, errOut)
		}
		var r struct {
			Findings []struct {
				Kind  string `json:"kind"`
				Bytes int64  `json:"bytes"`
				Count int    `json:"count"`
				Site  struct {
					Function string `json:"function"`
					Line     int    `json:"line"`
				} `json:"site"`
				Message string `json:"message"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Findings) != 1 {
			t.Fatalf("%s: %d findings", tt.file, len(r.Findings))
		}
		f := r.Findings[0]
		if f.Kind != "leak" || f.Bytes != tt.bytes || f.Count != tt.count || f.Site.Function != tt.site || f.Site.Line != tt.line {
			t.Errorf("%s: %+v", tt.file, f)
		}
		if !strings.Contains(f.Message, "made by cublasCreate_v2") || !strings.Contains(f.Message, "call cublasDestroy") || strings.Contains(f.Message, "cudaFree") {
			t.Errorf("%s: message %s", tt.file, f.Message)
		}
	}
}
