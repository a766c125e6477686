package oom

import (
	"fmt"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

// tfFileRe matches TensorFlow's and Keras's installed Python files.
var tfFileRe = lazyre.New(`(?:^|[/\\])(?:tensorflow|tensorflow_core|keras|tf_keras)[/\\]`)

// tfInternalSite drops the site of a TensorFlow OOM (m) whose traceback
// holds only TensorFlow's own frames (errors_impl.py's __exit__, where
// TensorFlow raises the op's failed status as an exception, session.py's
// _do_call): none of them is where the program asked for the tensor, and
// the traceback, cut or caught above them, does not show that place; a
// note says so. The stack is kept as printed.
func (r *Report) tfInternalSite(m Message) {
	if (m.Generation != pytorchtext.GenTF && m.Generation != pytorchtext.GenXLA) || len(r.Stack) == 0 || !callsite.IsLibrary(r.Frame) {
		return
	}
	for _, f := range r.Stack {
		if !tfFileRe.MatchString(f.Filename) {
			return
		}
	}
	r.Notes = append(r.Notes, fmt.Sprintf("the traceback holds only TensorFlow's own frames (innermost %s: TensorFlow's code that runs the graph and raises an op's failed status), none of the program's: no site is named; the program's line is above the part of the traceback the inputs show, and the op is the one the message names", frameString(r.Frame)))
	r.Frame = callsite.Frame{}
}

// tfTensorCause weighs TensorFlow's "OOM when allocating tensor" against
// the BFC allocator's statistics printed before it (r.tfLimit, r.tfInUse:
// its Limit, the memory it may take of the GPU, and InUse, what its
// chunks in use held). The request is the BFC allocator's failure record
// where the inputs have one, else the tensor's shape times its type's
// size, which the message prints (pytorchtext.TFTensorBytes), rounded up
// to the allocator's 256 bytes. A request larger than Limit - InUse could
// not have fit whatever the allocator's free chunks were: capacity, within
// TensorFlow's share of the GPU. One that fits is left to a note: the free
// memory may have been split in chunks none large enough, or the region
// not grown (the GPU taken by others since TensorFlow started), which the
// statistics do not tell apart.
func (r *Report) tfTensorCause() {
	bytes, shape, dtype := pytorchtext.TFTensorBytes(r.Text)
	fromShape := false
	if !r.known(r.RequestedBytes) && bytes > 0 {
		r.RequestedBytes, r.SegmentBytes, fromShape = bytes, bytes, true
		r.tfShapeSized = true
	}
	if r.tfLimit < 0 || r.tfInUse < 0 || !r.known(r.RequestedBytes) {
		return
	}
	req := (r.RequestedBytes + 255) &^ 255
	left := max(0, r.tfLimit-r.tfInUse)
	stats := fmt.Sprintf("TensorFlow's BFC allocator had %s in use of its %s limit (its statistics before the error: Limit %d, InUse %d bytes), %s left",
		size(r.tfInUse), size(r.tfLimit), r.tfLimit, r.tfInUse, size(left))
	what := fmt.Sprintf("the %s request", size(r.RequestedBytes))
	if fromShape {
		what = fmt.Sprintf("the %s tensor (shape [%s] of %s: %d bytes)", size(r.RequestedBytes), shape, dtype, r.RequestedBytes)
	}
	if req <= left {
		r.Notes = append(r.Notes, fmt.Sprintf("%s, enough for %s: the free memory was split in chunks none large enough for it, or the allocator could not grow its region (other processes took the GPU's memory after TensorFlow started); the statistics do not tell which", stats, what))
		return
	}
	r.Causes = append(r.Causes, Cause{Name: CauseCapacity,
		Evidence: fmt.Sprintf("%s, less than %s: no release of free chunks could have made room within the allocator's limit", stats, what),
		Numbers:  map[string]int64{"allowed_bytes": r.tfLimit, "in_use_bytes": r.tfInUse, "requested_bytes": r.RequestedBytes, "shortfall_bytes": req - left},
		Advice:   "need less at the peak: a smaller batch or a smaller tensor at this op (its shape is in the message), mixed precision; or give TensorFlow more of the GPU where its limit is set below it (per_process_gpu_memory_fraction, memory_limit of a logical device) or other processes held the GPU when it started"})
}
