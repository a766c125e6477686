package pytorchtext

import "strings"

// Ray's OutOfMemoryError: ray.exceptions.OutOfMemoryError is raised when
// Ray's memory monitor kills a task or actor because the node's host
// memory (RAM) went over its threshold (RAY_memory_usage_threshold, 0.95
// by default): "ray.exceptions.OutOfMemoryError: Task was killed due to
// the node running low on memory." followed by "Memory on the node (IP:
// ...) ... was 59.49GB / 62.58GB (0.950744), which exceeds the memory
// usage threshold 0.95". That is host memory, not a GPU's: no GPU OOM,
// but a warning saying what it is. A task's failure is re-raised by the
// caller as "ray.exceptions.RayTaskError(OutOfMemoryError): ray::..."
// with the class's name only, which is also what a task that raised
// torch.OutOfMemoryError (a GPU OOM) prints: alone, with no CUDA message
// and no Ray memory-monitor line in the text, it gets a warning that the
// name does not tell which.

// rayHostOOMPhrases start Ray's host-memory OOM.
var rayHostOOMPhrases = []string{"ray.exceptions.OutOfMemoryError: ", "OutOfMemoryError: Task was killed due to the node running low on memory"}

// rayTaskOOMPhrase is a Ray task's failure wrapping an exception named
// OutOfMemoryError, Ray's or torch's.
const rayTaskOOMPhrase = "RayTaskError(OutOfMemoryError)"

// rayOOM is what the reader saw of Ray's OutOfMemoryError.
type rayOOM struct {
	host     bool  // a host-memory OOM of Ray's was warned of
	taskLine int64 // the first RayTaskError(OutOfMemoryError) line, 0 when none
}

// seeRayOOM warns of Ray's host-memory OOM on line, and remembers the
// first line of a Ray task's failure wrapping an OutOfMemoryError.
func (r *Reader) seeRayOOM(line string) {
	if !strings.Contains(line, "OutOfMemoryError") {
		return
	}
	for _, p := range rayHostOOMPhrases {
		if i := strings.Index(line, p); i >= 0 {
			if exceptClauseAt(line, i) {
				// Code that catches it ("except
				// ray.exceptions.OutOfMemoryError: pass"), no OOM.
				return
			}
			if !r.ray.host {
				note := "Ray's OutOfMemoryError (" + clip(strings.TrimSpace(line[i:])) + "): Ray's memory monitor killed a task or actor because the node's host memory (RAM) went over Ray's threshold (RAY_memory_usage_threshold, 0.95 of the node's memory by default): host memory, not a GPU's; no GPU OOM is counted for it"
				r.meta.Warnings.Linef(int(r.line), "%s", note)
				r.meta.NotOOMs.Linef(int(r.line), "%s", note)
			}
			r.ray.host = true
			return
		}
	}
	if r.ray.taskLine == 0 && strings.Contains(line, rayTaskOOMPhrase) {
		r.ray.taskLine = r.line
	}
}

// endRayOOM warns, at the text's end, of a Ray task's failure wrapping an
// OutOfMemoryError when nothing in the text tells whose it was: no GPU
// out-of-memory message was read, and no Ray host-memory OOM.
func (r *Reader) endRayOOM() {
	if r.ray.taskLine == 0 || r.ray.host || r.meta.Messages > 0 {
		return
	}
	r.meta.Warnings.Linef(int(r.ray.taskLine), "a Ray task failed with an exception named OutOfMemoryError (%s) and the text has neither its message nor Ray's memory-monitor report: Ray's own OutOfMemoryError (its memory monitor killed the task because the node's host memory ran low) or torch.OutOfMemoryError raised in the task (a GPU OOM); the name alone does not tell which, so no GPU OOM is counted; the task's own log (its worker's stderr, \"(pid=N)\" lines) would show the message", rayTaskOOMPhrase)
}

// exceptClauseAt reports whether the exception's name at line[i] is a
// Python except clause's, code that catches it, not an error raised:
// "except" (or "except (" and other names) starts the line before it.
func exceptClauseAt(line string, i int) bool {
	pre := strings.TrimLeft(line[:i], " \t")
	return strings.HasPrefix(pre, "except ") || strings.HasPrefix(pre, "except(")
}
