package oom

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// remoteErrorRe matches what, written before an out-of-memory message or
// as its exception, says another process raised it and this one received
// its words: a server's error passed to its client (TGI's client:
// "GenerationError: Request failed during generation: Server error: CUDA
// out of memory ..."), a Ray task's error raised again by ray.get
// ("RayTaskError(OutOfMemoryError)", "ray::Actor.method()"), an RPC's.
var remoteErrorRe = lazyre.New(`(?i)\bserver error\b|\bRayTaskError\b|\bray::|\bremote (?:error|exception|traceback)\b|\bgrpc\b|\brpc error\b`)

// cxxPlaceRe matches a C++ or CUDA source place, path:line, that an
// out-of-memory message names ("... out of memory (/src/tensorrt_llm/cpp/
// tensorrt_llm/runtime/tllmBuffers.h:125)"); the path is group 1, the
// line group 2.
var cxxPlaceRe = lazyre.New(`([\w./\\+-]*[\w+-]\.(?:h|hh|hpp|hxx|c|cc|cpp|cxx|cu|cuh)):(\d+)\b`)

// pytorchSourceRe matches PyTorch's own C++ sources, which its messages
// name (1.x: "(malloc at /pytorch/c10/cuda/CUDACachingAllocator.cpp:289)"):
// there the allocator failed inside the operator the Python traceback
// called, so that traceback's line is the site.
var pytorchSourceRe = lazyre.New(`(?:^|[/\\])(?:c10|aten|THC|THCUNN|torch[/\\]csrc|caffe2)[/\\]`)

// cxxCallRe matches the CUDA call a runtime error names ("CUDA runtime
// error in ::cudaMallocAsync(ptr, n, ...)"): group 1.
var cxxCallRe = lazyre.New(`\bin (?:::)?((?:cu|cuda)[A-Z]\w*)\(`)

// reraisedSite sets where a message's allocation failed when its Python
// traceback is not that place (r.Stack and r.Frame from frames, innermost
// first): for another process's error re-raised here (remoteErrorRe),
// nowhere in this process: the stack is cleared and a note names the
// traceback as the receiver's; for a message naming a C++ place that is
// not PyTorch's (cxxPlaceRe) where the traceback holds no frame of the
// program's own (its site would be a library's Python line, one that
// may only raise an error string the C++ side reported), that place, put
// before the Python frames, with a note that the traceback is where the
// error reached Python.
func (r *Report) reraisedSite(m Message) {
	if len(r.Stack) == 0 {
		return
	}
	var py []string
	for _, f := range r.Stack {
		py = append(py, frameString(f))
	}
	client := strings.Join(py, " < ")
	if w := remoteErrorRe.Re().FindString(m.Exception + " " + m.Prefix); w != "" {
		r.Stack, r.Frame = nil, callsite.Frame{}
		r.Notes = append(r.Notes, fmt.Sprintf("the message is another process's error received here (%q before it): the allocation failed in that process (the server, or the remote task), whose own log holds its traceback; this traceback, %s, is the receiver's, where the error was raised again, not the allocation's site", w, client))
		return
	}
	if m.Reraised {
		if r.cxxPlaceSite(m, client) {
			return // the place the words name
		}
		// The innermost line builds the exception from a value: the
		// words came from where the allocation failed (another process,
		// or an error caught before), which this traceback does not show.
		r.Notes = append(r.Notes, fmt.Sprintf("the traceback's innermost line, %s, raises a new exception built from a value (\"raise X(...)\"): the message's words were passed on there (a worker's, a subprocess's or a server's error received, or one caught earlier), so the allocation failed where they came from, not on that line; no site is given; the log of the process that printed it first holds its traceback", frameString(m.Frames[0])))
		r.Stack, r.Frame = nil, callsite.Frame{}
		return
	}
	if !callsite.IsLibrary(r.Frame) {
		// A line of the program's own: the call that led to the
		// allocation, where the program can change what it asks for.
		return
	}
	r.cxxPlaceSite(m, client)
}

// cxxPlaceSite sets the C++ place a message names (cxxPlaceRe, not
// PyTorch's own) as its site, before the Python frames (client, as
// frameString writes them), with a note; it reports whether it did.
func (r *Report) cxxPlaceSite(m Message, client string) bool {
	text := m.Prefix + " " + m.Text
	for _, sm := range cxxPlaceRe.Re().FindAllStringSubmatch(text, -1) {
		if pytorchSourceRe.MatchString(sm[1]) {
			continue
		}
		line, err := strconv.ParseInt(sm[2], 10, 64)
		if err != nil || line <= 0 {
			continue
		}
		name := "C++"
		if c := cxxCallRe.FindStringSubmatch(text); c != nil {
			name = c[1]
		}
		f := callsite.Frame{Filename: sm[1], Line: line, Name: name}
		r.Stack = append([]callsite.Frame{f}, r.Stack...)
		r.Frame = f
		r.Notes = append(r.Notes, fmt.Sprintf("the message names the C++ place where the allocation failed, %s: that is the site given; the Python traceback, %s, is where the error reached Python, which may have raised again an error a C++ thread reported (an engine's executor) rather than called the allocation", frameString(f), client))
		return true
	}
	return false
}
