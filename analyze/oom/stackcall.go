package oom

import (
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// stackCallRe matches the last part of a frame's name that is a CUDA
// driver or runtime function: JCuda's wrappers are named after them
// ("jcuda.driver.JCudaDriver.cuCtxCreate", "jcuda.runtime.JCuda.cudaMalloc").
var stackCallRe = lazyre.New(`^(?:cu[A-Z][A-Za-z0-9_]*|cuda[A-Z][A-Za-z0-9_]*)$`)

// stackCallOf returns the CUDA function whose call failed as a message's
// stack names it (frames innermost first): the innermost frame whose
// method is named as a CUDA driver or runtime function (stackCallRe;
// JCuda's checkResult, which throws, is inside it), and that frame; ""
// when no frame is one. The frame is as frameString writes it.
func stackCallOf(frames []callsite.Frame) (string, string) {
	for _, f := range frames {
		name := f.Name
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if stackCallRe.MatchString(name) {
			return name, frameString(f)
		}
	}
	return "", ""
}

// cudaBindingFrame reports whether f is a frame of JCuda, the Java
// binding of CUDA (its checkResult, which throws, and the wrapper named
// after the call: "jcuda.driver.JCudaDriver.cuMemAlloc"): like PyTorch's
// own frames, not the program's site of the OOM (the note names the call
// from it: see stackCallOf).
func cudaBindingFrame(f callsite.Frame) bool {
	return strings.HasPrefix(f.Name, "jcuda.")
}
