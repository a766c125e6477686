package pytorchtext

import (
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// A Java program's exception prints its stack after its line, innermost
// frame first: "jcuda.CudaException: CUDA_ERROR_OUT_OF_MEMORY", then
// "\tat jcuda.driver.JCudaDriver.checkResult(JCudaDriver.java:337)",
// "\tat jcuda.driver.JCudaDriver.cuCtxCreate(JCudaDriver.java:1514)", ...
// (donaldlab/OSPREY3#67). The frames say which call failed, which the
// status alone does not (an allocation, or a context's creation). So the
// reader holds an out-of-memory message on a Java exception's line while
// the lines after it are its stack's frames ("at CLASS.METHOD(FILE:LINE)",
// "Caused by: ...", "... N more"), and adds it with them as its
// traceback's frames, outermost first as Python's are; the first other
// line (or the text's end) adds it.

// javaExceptionRe matches the text before an out-of-memory message that
// makes its line a Java exception's: a class name ending in Exception or
// Error (a package's dots before it), then ": " (jpype's
// "CudaExceptionPyRaisable: jcuda.CudaException: " too).
var javaExceptionRe = lazyre.New(`(?:^|\s)(?:[a-z_][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error): $`)

// javaFrameRe reads a Java stack frame's line: its method, qualified by
// its class, and its file and line ("Unknown Source" and "Native Method"
// without a line). What comes before "at" is the line's prefix (a log's,
// or an editor's line number in a paste: " 17     at ...").
var javaFrameRe = lazyre.New(`(?:^|\s)at ((?:[\w$]+\.)+[\w$<>]+)\(([^():]*)(?::(\d{1,9}))?\)\s*$`)

// javaStackRest matches the other lines of a Java stack: a cause's
// header and the frames it shares with the exception it caused.
var javaStackRest = lazyre.New(`(?:^|\s)(?:Caused by: |\.\.\. \d+ more\s*$|Suppressed: )`)

// javaLine reports whether the text before an out-of-memory message
// makes its line a Java exception's.
func javaLine(prefix string) bool {
	return (strings.Contains(prefix, "Exception: ") || strings.Contains(prefix, "Error: ")) && javaExceptionRe.MatchString(prefix)
}

// holdJava holds m, on a Java exception's line, for its stack's frames.
func (r *Reader) holdJava(m Message, frames []tbFrame, line int64) {
	r.flushJava() // one on the same line before it
	r.java = &heldMessage{msg: m, frames: frames, line: line}
	r.javaFrames = nil
}

// seeJava reads a line after a message held for its Java stack: a frame
// is kept; a cause's header or "... N more" goes on; another line adds
// the message with the frames read. It reports whether the line was the
// stack's.
func (r *Reader) seeJava(line string) bool {
	h := r.java
	if h == nil {
		return false
	}
	if f := javaFrameRe.FindStringSubmatch(line); f != nil {
		if len(r.javaFrames) < maxFrames {
			n, _ := strconv.ParseInt(f[3], 10, 64)
			r.javaFrames = append(r.javaFrames, tbFrame{file: f[2], line: n, name: f[1]})
		}
		return true
	}
	if javaStackRest.MatchString(line) {
		return true
	}
	r.flushJava()
	return false
}

// flushJava adds the message held for its Java stack, with the stack's
// frames when it had none of its own (a Python traceback that ended with
// it is what called the Java method).
func (r *Reader) flushJava() {
	h := r.java
	if h == nil {
		return
	}
	r.java = nil
	frames := h.frames
	if frames == nil && len(r.javaFrames) > 0 {
		// Java prints the innermost frame first; tracebacks here are kept
		// outermost first.
		for i := len(r.javaFrames) - 1; i >= 0; i-- {
			frames = append(frames, r.javaFrames[i])
		}
	}
	r.javaFrames = nil
	r.addMessage(h.msg, frames, h.line)
}
