package pytorchtext

import (
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// NCCL's out-of-memory WARN (CUDACHECK's "Cuda failure 'out of memory'",
// Library "NCCL") gives no size, but when the failed call was
// ncclCudaCalloc (include/alloc.h) NCCL WARNs again a line or two after
// it, from the same thread: "NCCL WARN Failed to CUDA calloc N bytes"
// (N in bytes, "%ld"). The message is held until that line, which gives
// its Requested, or until maxNCCLLines other non-blank lines, the end of
// the text, or another message.

// ncclHeld is an NCCL out-of-memory message waiting for its size.
type ncclHeld struct {
	msg  Message
	line int64
	// tag is the WARN's thread tag, "host:pid:tid [dev]", which the
	// calloc line must carry too.
	tag  string
	seen int // non-blank lines read since
}

// maxNCCLLines bounds the non-blank lines after the failure within which
// the calloc line is looked for (NCCL prints it right after, a blank
// line between).
const maxNCCLLines = 3

// ncclTagRe reads a WARN line's thread tag, "host:pid:tid [dev]", before
// the file and line that WARN'd.
var ncclTagRe = lazyre.New(`([^\s:]+:\d+:\d+ \[\d+\])\s+\S+:\d+ NCCL WARN `)

// ncclCallocRe reads alloc.h's "Failed to CUDA calloc N bytes".
var ncclCallocRe = lazyre.New(`NCCL WARN Failed to CUDA calloc (\d{1,19}) bytes`)

// ncclTag returns the thread tag of an NCCL WARN line (the text before
// the message), "" when it has none.
func ncclTag(before string) string {
	if m := ncclTagRe.FindStringSubmatch(before); m != nil {
		return m[1]
	}
	return ""
}

// holdNCCL holds an NCCL out-of-memory message whose text before it,
// before, carries NCCL's thread tag; without one it is added at once.
func (r *Reader) holdNCCL(m Message, before string) {
	r.flushNCCL()
	tag := ncclTag(before)
	if tag == "" {
		r.addMessage(m, nil, r.line)
		return
	}
	r.nccl = &ncclHeld{msg: m, line: r.line, tag: tag}
}

// seeNCCL reads a line after a held NCCL message: its calloc size from
// the same thread, or one more line it did not come within.
func (r *Reader) seeNCCL(line string) {
	h := r.nccl
	if h == nil || strings.TrimSpace(line) == "" {
		return
	}
	if m := ncclCallocRe.FindStringSubmatchIndex(line); m != nil && ncclTag(line[:m[0]+len("NCCL WARN ")]) == h.tag {
		if n, err := strconv.ParseInt(line[m[2]:m[3]], 10, 64); err == nil {
			h.msg.Requested = n
		}
		r.flushNCCL()
		return
	}
	if h.seen++; h.seen >= maxNCCLLines {
		r.flushNCCL()
	}
}

// flushNCCL adds the held NCCL message, if any.
func (r *Reader) flushNCCL() {
	if h := r.nccl; h != nil {
		r.nccl = nil
		r.addMessage(h.msg, nil, h.line)
	}
}
