package oom

import (
	"strings"
	"testing"
)

// A Java exception's stack after its out-of-memory status names the call
// that failed (javastack.go, stackCallOf): a synthetic JCuda log (tabs
// before "at", as the JVM prints them; the frames of JCuda's own
// JCudaDriver.cuMemAlloc and checkResult, whose line numbers are made up)
// gives the program's stack, JCuda's own frames left out, and a note that
// names cuMemAlloc, an allocation, from its frame. Before, the
// frames were not read: no stack, and "an allocation, or creating a
// context ...: the message does not say which".
func TestJavaStackNamesCall(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/synthetic_jcuda_cumemalloc_tabs.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	notes := strings.Join(r.Notes, "\n")
	// JCuda's own frames (checkResult, cuMemAlloc) are not the program's
	// site: the stack shown is the program's two frames, innermost first.
	if len(r.Stack) != 2 || r.Stack[0].Name != "org.example.GpuBuffer.<init>" || r.Stack[0].Line != 41 || r.Stack[1].Name != "org.example.Main.main" || r.Frame.Name != "org.example.GpuBuffer.<init>" {
		t.Errorf("stack %+v, frame %+v", r.Stack, r.Frame)
	}
	if !strings.Contains(notes, "JCuda's call to cuMemAlloc (an allocation; named by the stack's frame jcuda.driver.JCudaDriver.cuMemAlloc (JCudaDriver.java:2775))") || strings.Contains(notes, "does not say which") {
		t.Errorf("notes %q", notes)
	}
}
