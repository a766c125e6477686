package sanitizer

import (
	"strings"
	"testing"
)

// kotekan#1234: an API error whose innermost program frame is a class's
// constructor named as the runtime's API is ("cudaInputData::cudaInputData"
// in cudaInputData.cpp:23). It was dropped as a CUDA runtime frame (its
// base name matched cuda[A-Z]...), and the error placed in the
// std::_Function_handler frame that called it.
func TestHunt41APIErrorAtClassNamedCuda(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/kotekan1234_api_error_wrapped_frames_cut.txt", Options{})
	if len(res.Errors) != 1 {
		t.Fatalf("errors %+v, want 1", res.Errors)
	}
	e := res.Errors[0]
	if e.API != "cudaHostGetFlags" || e.Frame.Name != "cudaInputData::cudaInputData" ||
		!strings.HasSuffix(e.Frame.Filename, "cudaInputData.cpp") || e.Frame.Line != 23 {
		t.Errorf("error %+v: want cudaHostGetFlags at cudaInputData::cudaInputData (cudaInputData.cpp:23)", e)
	}
}

// runtimeBase: the API's templates and the static runtime's namespace are
// the runtime's; a member of the program's class or namespace is not.
func TestHunt41RuntimeBase(t *testing.T) {
	for short, want := range map[string]bool{
		"cudaMalloc<float>":               true,
		"cudart::cudaApiMalloc":           true,
		"cudaInputData::cudaInputData":    false,
		"myapp::cudaHelpers::cudaCheck":   false,
		"Buffer<cudaStream_t>::cudaAlloc": false,
		"cudaMalloc<std::vector<int>>":    true,
	} {
		if got := runtimeBase(short, baseName(short)); got != want {
			t.Errorf("runtimeBase(%q) = %v, want %v", short, got, want)
		}
	}
}
