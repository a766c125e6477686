package pytorchtext

import (
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// llama.cpp's ggml backends end the process on a failed call with their
// error function (ggml-cuda.cu's ggml_cuda_error, ggml-cann's
// ggml_cann_error), which prints the runtime's error string and, on the
// next two lines, the device that was current, the function and place of
// the check, and the call:
//
//	CUDA error: out of memory
//	  current device: 1, in function alloc at ggml/src/ggml-cuda/ggml-cuda.cu:648
//	  cuMemSetAccess(start_ptr, reserve_size, &access, 1)
//
// ("ROCm error: " in a HIP build, "MUSA error: " in a MUSA one). The
// first line alone reads as PyTorch's "CUDA error: out of memory" (and
// c10's own words are the same): the device line says it is llama.cpp's,
// names the GPU and the place. The reader holds such a status line for
// the line after it (ggmlDeviceLine).

// ggmlDeviceRe matches the device line; groups: the device, the
// function, the file, the line.
var ggmlDeviceRe = lazyre.New(`^\s*current device: (-?\d{1,4}), in function (\S+) at (.+?):(\d{1,7})\s*$`)

// GGMLPrinter is llama.cpp's ggml as the printer of its error function's
// status (Message.Printer).
const GGMLPrinter = "llama.cpp's ggml (its backend's error function, ggml_cuda_error: \"current device: N, in function F at FILE:LINE\")"

// ggmlStatusHeld reports whether m, read after lead on its line, is a
// runtime's out-of-memory string as ggml's error function prints it: a
// GenCUDAError "CUDA error: ", "ROCm error: " or "MUSA error: " at the
// line's start (a log's prefix aside), with no exception before it.
func ggmlStatusHeld(m Message, lead string) bool {
	if m.Generation != GenCUDAError || m.Exception != "" || m.Printer != "" {
		return false
	}
	if !strings.HasPrefix(m.Text, "CUDA error: ") && !strings.HasPrefix(m.Text, "ROCm error: ") && !strings.HasPrefix(m.Text, "MUSA error: ") {
		return false
	}
	t := strings.TrimSpace(lead)
	return t == "" || !strings.ContainsAny(t[len(t)-1:], ":`'\"(")
}

// ggmlDeviceLine reads line for the status held (Reader.ggmlStatus): the
// device line sets its device, its printer and its place (a frame) and is
// taken; another line adds it as it is. It reports whether line was
// taken.
func (r *Reader) ggmlDeviceLine(line string) bool {
	h := r.ggmlStatus
	r.ggmlStatus = nil
	if h.lines == 1 {
		// The device line was read: this may be the call.
		if x := ggmlCallRe.FindStringSubmatch(contLine(h.lead, line)); x != nil {
			h.msg.Call = x[1]
			r.addMessage(h.msg, h.frames, h.line)
			return true
		}
		r.addMessage(h.msg, h.frames, h.line)
		return false
	}
	x := ggmlDeviceRe.FindStringSubmatch(contLine(h.lead, line))
	if x == nil {
		r.addMessage(h.msg, h.frames, h.line)
		return false
	}
	if d, err := strconv.Atoi(x[1]); err == nil && d >= 0 {
		h.msg.Device = d
	}
	h.msg.Printer = GGMLPrinter
	n, _ := strconv.ParseInt(x[4], 10, 64)
	h.frames = append(h.frames[:len(h.frames):len(h.frames)], tbFrame{file: x[3], line: n, name: x[2]})
	h.lines = 1
	r.ggmlStatus = h // its call comes on the next line
	return true
}

// ggmlCallRe matches the line ggml's error function prints after its
// device line: the failed call's expression, indented ("  cudaGraphLaunch(
// graph->instance, cuda_ctx->stream())"); its group is the call's name,
// a runtime's or driver's function (cuda*, cu*, hip*, mu*), or the
// wrapper ggml named in its place (ollama's cudaMemcpyAsyncReserve).
var ggmlCallRe = lazyre.New(`^\s*((?:cuda|cu|hip|mu|musa|cublas|hipblas)[A-Za-z0-9_]*)\s*\(`)
