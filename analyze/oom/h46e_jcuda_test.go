package oom

import (
	"strings"
	"testing"
)

// A Java exception's stack after its out-of-memory status names the call
// that failed (javastack.go, stackCallOf): a synthetic JCuda log (tabs
// before "at", as the JVM prints them; the frames of JCuda's own
// JCudaDriver.cuMemAlloc and checkResult, whose line numbers are made up)
// gives the stack, innermost first, checkResult then cuMemAlloc, and a
// note that names cuMemAlloc, an allocation, from its frame. Before, the
// frames were not read: no stack, and "an allocation, or creating a
// context ...: the message does not say which".
func TestJavaStackNamesCall(t *testing.T) {
	pm := NewPostmortem([]Input{oomInput(t, "pastes/synthetic_jcuda_cumemalloc_tabs.txt")}, PostmortemOptions{})
	if len(pm.OOMs) != 1 {
		t.Fatalf("%d OOMs", len(pm.OOMs))
	}
	r := pm.OOMs[0]
	notes := strings.Join(r.Notes, "\n")
	if len(r.Stack) != 4 || r.Stack[1].Name != "jcuda.driver.JCudaDriver.cuMemAlloc" || r.Stack[1].Line != 2775 || r.Stack[3].Name != "org.example.Main.main" {
		t.Errorf("stack %+v", r.Stack)
	}
	if !strings.Contains(notes, "JCuda's call to cuMemAlloc (an allocation; named by the stack's frame jcuda.driver.JCudaDriver.cuMemAlloc (JCudaDriver.java:2775))") || strings.Contains(notes, "does not say which") {
		t.Errorf("notes %q", notes)
	}
}
