package sanitizer

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
)

// NVIDIA/cccl issues 1897 and 1896: compute-sanitizer's leak records in a
// CI log, indented two spaces, a test's "Using device 0: ..." line inside
// the run, each backtrace cut after a few frames. The 512-byte leak's
// frames are the driver's and the static CUDA runtime's only: site unknown,
// said to be cut. The 4-byte one's innermost program frame is the Catch
// test's (C_A_T_C_H_T_E_S_T_0, no line information).
func TestSanitizerCCCLIndentedLeaks(t *testing.T) {
	res := analyzeSan(t, "../../testdata/sanitizer/field/cccl1897_indented_leak_cut.txt", Options{})
	if len(res.Sites) != 1 || res.Sites[0].Kind != callsite.Leak || res.Sites[0].Bytes != 512 || !strings.Contains(res.Sites[0].Unknown, "cut") {
		t.Errorf("cccl1897: sites %+v", res.Sites)
	}
	res = analyzeSan(t, "../../testdata/sanitizer/field/cccl1896_indented_leak_catch_frame_cut.txt", Options{})
	if len(res.Sites) != 1 || res.Sites[0].Kind != callsite.Leak || res.Sites[0].Bytes != 4 || !strings.HasPrefix(res.Sites[0].Frame.Name, "C_A_T_C_H_T_E_S_T_0") || !res.Sites[0].NoLineInfo {
		t.Errorf("cccl1896: sites %+v", res.Sites)
	}
}
