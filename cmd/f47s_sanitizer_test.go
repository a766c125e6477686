package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// analyzeSanitizerJSON runs analyze --format json on a compute-sanitizer
// input of testdata/sanitizer and returns its findings and errors.
func analyzeSanitizerJSON(t *testing.T, file string) (findings []map[string]any, errs []map[string]any) {
	t.Helper()
	code, out, errOut := runIO(t, "", false, "analyze", "--format", "json", "../testdata/sanitizer/"+file)
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("%s: exit %d: %s", file, code, errOut)
	}
	var r struct {
		Findings []map[string]any `json:"findings"`
		Errors   []map[string]any `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, out)
	}
	return r.Findings, r.Errors
}

// cudaErrorCudartUnloading ("driver shutting down") is what a CUDA call
// returns once the runtime has begun to unload at process exit: BVLC/caffe#4026's
// cudaFree, from curandDestroyGenerator in caffe::Caffe's destructor, run
// by boost's thread-specific storage cleanup after main returned. Its
// arguments are not the fault, so "check the call's arguments" is wrong
// advice; the README's suppression example lists the error as shutdown
// noise. The driver API's name for it is CUDA_ERROR_DEINITIALIZED.
func TestF47sShutdownErrorIsShutdownOrder(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "pub_caffe4026_cudart_unloading.txt")
	if len(errs) != 1 {
		t.Fatalf("%d errors", len(errs))
	}
	msg, _ := errs[0]["message"].(string)
	if strings.Contains(msg, "check the call's arguments") || !strings.Contains(msg, "shutting down") ||
		!strings.Contains(msg, "destructor") || !strings.Contains(msg, `kind=api message="cudaErrorCudartUnloading"`) {
		t.Errorf("message %q", msg)
	}
}

// racecheck writes a race over several lines, each "and ... access at"
// line going on with the first: "Race reported between Read access at
// compress(...)+0x260" / "and Write access at ...+0x200 [294291 hazards]"
// (ORNL/HeCBench#133). Joined, they are one sentence: no colon between
// the first line and its "and".
func TestF47sRaceLinesJoinAsOneSentence(t *testing.T) {
	_, errs := analyzeSanitizerJSON(t, "pub_hecbench133_race.txt")
	if len(errs) != 2 {
		t.Fatalf("%d errors", len(errs))
	}
	msg, _ := errs[0]["message"].(string)
	want := "Warning: Race reported between Read access at compress(const unsigned int *, const unsigned int *, uint2 *, int)+0x260 and Write access at compress(const unsigned int *, const unsigned int *, uint2 *, int)+0x200 [294291 hazards] and Write access at"
	if !strings.HasPrefix(msg, want) {
		t.Errorf("message %q", msg)
	}
}

// pytorch/pytorch#52253's cuda-memcheck leak record, pasted, ends in
// "Host Frame:/home/alexander/git/Quansight/py": a path cut mid-name, no
// function, no address, where every other host frame of the record ends
// in [0x...]. The tool showed the fragment as the site ("allocated at
// /home/alexander/git/Quansight/py"). The whole frames end in
// libc10_cuda.so, PyTorch's caching allocator: the program's own caller is
// not in the paste, so the finding is the pool's memory with its site
// unknown, and the fragment is named nowhere.
//
// BVLC/caffe#4026's paste ends the same way ("Host Frame:/lib/x86_64-linux-gnu/li"):
// the error's stack must not show the fragment either.
func TestF47sCutHostFrameIsNotTheSite(t *testing.T) {
	fs, _ := analyzeSanitizerJSON(t, "pub_pytorch52253_cut_frame.txt")
	if len(fs) != 1 {
		t.Fatalf("%d findings", len(fs))
	}
	f := fs[0]
	b, _ := json.Marshal(f)
	if strings.Contains(string(b), "Quansight/py\"") || strings.Contains(string(b), "allocated at /home") {
		t.Errorf("the cut frame is shown: %s", b)
	}
	if f["kind"] != "retained" || f["bytes"] != float64(2097152) || f["site_unknown"] == nil {
		t.Errorf("finding %s", b)
	}
	_, errs := analyzeSanitizerJSON(t, "pub_caffe4026_cudart_unloading.txt")
	if b, _ := json.Marshal(errs); len(errs) != 1 || strings.Contains(string(b), "x86_64-linux-gnu/li\"") {
		t.Errorf("caffe#4026's cut frame is shown: %s", b)
	}
}
