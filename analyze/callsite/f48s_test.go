package callsite

import "testing"

// compute-sanitizer names a device function cloned into a kernel with the
// clone first: "[clone myKernel(int *, int *)] outlineSync()" is
// outlineSync, called from myKernel (NVIDIA's synccheck manual, the
// divergent-threads example). Before, the short name was myKernel, and the
// record read as myKernel calling itself.
func TestF48sLeadingCloneName(t *testing.T) {
	for in, want := range map[string]string{
		"[clone myKernel(int *, int *)] outlineSync()": "outlineSync",
		"void f<int>(int*) [clone .part.0]":            "f<int>",
	} {
		if got := ShortName(in); got != want {
			t.Errorf("ShortName(%q) = %q, want %q", in, got, want)
		}
	}
}
