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
