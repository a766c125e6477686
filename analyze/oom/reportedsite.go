package oom

import (
	"fmt"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

// errorHelperRe matches the names of functions that only turn a status
// into an exception (numba's Driver._check_error, a binding's
// check_cuda_error, raise_error) or wrap any API call to do so (numba's
// safe_cuda_api_call): the allocation is their caller's call, not theirs.
var errorHelperRe = lazyre.New(`(?i)^_*(?:check|raise|throw)_?\w*(?:error|status|result)s?$|^_*safe_\w*call$`)

// nonAllocatingCalls are torch.cuda's functions, by the name of their
// frame in torch/cuda/, that allocate no GPU memory on their own
// (setting or querying a stream, waiting on one, an event's record,
// query and wait): a CUDA out-of-memory error raised from them was
// reported there, after an earlier call failed (CUDA reports errors of
// asynchronous work at a later call), not an allocation of theirs.
var nonAllocatingCalls = map[string]bool{
	"set_stream": true, "_set_stream_by_id": true, "current_stream": true, "synchronize": true,
	"wait_stream": true, "wait_event": true, "record_event": true, "record": true, "query": true, "elapsed_time": true,
}

// reportedSite corrects the site of a message whose traceback's innermost
// frames are not the allocation (r.Stack, r.Frame set from m.Frames, the
// whole traceback innermost first): for a CUDA error PyTorch raised from
// a torch.cuda call that allocates nothing (nonAllocatingCalls), the
// site is cleared with a note: the error was reported there, and the
// failed call is earlier. Where every frame is a library's and the
// innermost are error helpers (errorHelperRe), the site is the innermost
// frame below them: the call whose status they raised.
func (r *Report) reportedSite(m Message) {
	if len(r.Stack) == 0 {
		return
	}
	if m.Generation == pytorchtext.GenCUDAError {
		for i, f := range m.Frames {
			if i >= 4 {
				break
			}
			if strings.Contains(f.Filename, "torch/cuda/") && nonAllocatingCalls[f.Name] {
				var py []string
				for _, s := range r.Stack {
					py = append(py, frameString(s))
				}
				r.Notes = append(r.Notes, fmt.Sprintf("the error was raised from torch.cuda's %s, which allocates no GPU memory of its own (but a CUDA context, where it switches to a device the process had not used): CUDA reports an error of asynchronous work at a later call (PyTorch's CUDA errors say they \"might be asynchronously reported at some other API call\"), so the allocation that failed was most likely an earlier call, which the traceback does not show; no site is given (the traceback, %s, is where it was reported); run with CUDA_LAUNCH_BLOCKING=1 to have it raised where it happens", frameString(f), strings.Join(py, " < ")))
				r.Stack, r.Frame = nil, callsite.Frame{}
				return
			}
		}
	}
	if !callsite.IsLibrary(r.Frame) || r.Frame != r.Stack[0] {
		return
	}
	for i, f := range r.Stack {
		if !errorHelperRe.MatchString(f.Name) {
			if i > 0 {
				r.Frame = f
			}
			return
		}
	}
}
