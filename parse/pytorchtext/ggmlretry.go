package pytorchtext

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// llama.cpp's ggml CUDA backend logs a failed cudaMalloc as
// "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on
// device 1: cudaMalloc failed: out of memory", then its callers' lines:
// "ggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size B",
// and the caller that wanted the buffer ("graph_reserve: failed to
// allocate compute buffers", "llama_kv_cache_update_impl: failed to
// allocate compute buffers"). Since ggml-org/llama.cpp PR #16748 (October
// 2025; ik_llama.cpp PR #879 does the same), a context whose compute
// buffers do not fit with pipeline parallelism (several copies of them,
// one per GPU in flight) logs at WARNING level "sched_reserve" (earlier
// "llama_context") ": compute buffer allocation failed, retrying without
// pipeline parallelism" and reserves them again with one copy. When that
// fits it goes on as ever: the compute buffer sizes ("CUDA0 compute
// buffer size = 804.02 MiB"), "graph splits", the server's "model
// loaded", "initializing, n_slots = 1", "all slots are idle"; when it
// does not, it throws "failed to allocate compute pp buffers", and the
// context is not created ("failed to create context", "failed to load
// model").
//
// So the reader holds a llama.cpp allocation failure while the lines of
// its chain follow it (lines with "failed to allocate", the next
// failure's own line). A retry line makes it wait for the retry's
// outcome: a line of a context that was made (llamaDonePhrases) makes the
// failures held one warning, a recovered allocation (not an OOM, as
// TensorRT's skipped tactics and TensorFlow's BFC retries are not); a
// line of a failed one (llamaFatalPhrases), or another allocation
// failure (the retry's own), makes them OOMs; the text's end before
// either makes them OOMs, with a warning that the outcome cannot be
// told. Without a retry line, the first line past the chain makes them
// OOMs, as they always were.

// llamaRetryPhrase is llama.cpp's word that it retries a compute buffer
// reservation that failed without pipeline parallelism.
const llamaRetryPhrase = "retrying without pipeline parallelism"

// llamaDonePhrases are llama.cpp's words, after a retry, of a context
// that was made: the compute buffers' sizes, the graph's splits, and
// llama-server's and the tools' lines of a model loaded and running.
var llamaDonePhrases = []string{" compute buffer size = ", "graph splits = ", "model loaded", "server is listening",
	"initializing, n_slots", "all slots are idle", "warming up the model", "llama_perf_context_print", "llama_print_timings"}

// llamaFatalPhrases are llama.cpp's words, after a retry, of a context
// that was not made, and those of a run that ended.
var llamaFatalPhrases = []string{"failed to allocate compute pp buffers", "failed to allocate compute tg buffers",
	"failed to allocate compute buffers", "failed to initialize the context", "failed to create context",
	"failed to load model", "error loading model", "unable to load model", "exiting due to model loading error",
	"Segmentation fault", "core dumped", "terminate called", "GGML_ASSERT"}

// ggmlFailureLineRe matches the line of a llama.cpp allocation failure
// (see ggmlAllocRe), before the reader has read it.
var ggmlFailureLineRe = lazyre.New(`allocating \d{1,12}\.\d{2} MiB on device \d{1,3}: cudaMalloc failed|` + vulkanSizeWords + `\d{1,20} failed|can't allocate \d{1,20} Bytes of memory on device`)

// llama.cpp's ggml Vulkan backend (ggml-vulkan.cpp, ggml_vk_create_buffer)
// logs a failed allocation on two lines: "ggml_vulkan: Device memory
// allocation of size N failed." (N in bytes), then "ggml_vulkan: " and
// the exception's what(), Vulkan-Hpp's "vk::Device::allocateMemory:
// ErrorOutOfDeviceMemory" (or "Requested buffer size exceeds device
// memory allocation limit: ErrorOutOfDeviceMemory", a request over the
// device's one-allocation limit). The second line is read as Vulkan's
// status; the first gives it its size and makes it llama.cpp's, so that
// its chain and its retry are read as the CUDA backend's are.
const vulkanSizeWords = "ggml_vulkan: Device memory allocation of size "

// vulkanSizeRe reads the size line.
var vulkanSizeRe = lazyre.New(`ggml_vulkan: Device memory allocation of size (\d{1,20}) failed`)

// vkSize is the size line read, for the status on the line after it.
type vkSize struct {
	bytes int64
	text  string // the line's words from "ggml_vulkan:" to "failed."
	line  int64
}

// seeVulkanSize notes line when it is llama.cpp's Vulkan size line.
func (r *Reader) seeVulkanSize(line string) {
	if !strings.Contains(line, vulkanSizeWords) {
		return
	}
	x := vulkanSizeRe.Re().FindStringSubmatchIndex(line)
	if x == nil {
		return
	}
	n, err := strconv.ParseInt(line[x[2]:x[3]], 10, 64)
	if err != nil {
		return
	}
	r.vkSize = &vkSize{bytes: n, text: line[x[0]:x[1]] + ".", line: r.line}
}

// takeVulkanSize gives m, a Vulkan status read at line[at] on the line
// right after llama.cpp's size line, that line's size and words, and the
// exception's words before the status on its own line ("vk::Device::
// allocateMemory: "; see vulkanSizeWords).
func (r *Reader) takeVulkanSize(m *Message, line string, at int) {
	v := r.vkSize
	if v == nil || v.line != r.line-1 || m.Generation != GenCUDAError || Library(m.Text) != "Vulkan" {
		return
	}
	r.vkSize = nil
	m.Requested = v.bytes
	what := m.Text
	if k := strings.LastIndex(line[:at], "ggml_vulkan: "); k >= 0 && strings.HasPrefix(line[at:], m.Text) {
		what = line[k+len("ggml_vulkan: "):at] + m.Text
	}
	m.Text = v.text + " " + what
}

// maxHeldGGML bounds the llama.cpp failures held at once; past it the
// oldest is counted as an OOM.
const maxHeldGGML = 64

// ggmlRetry is what the reader holds of llama.cpp's failures: those of
// one chain, and the line of the retry after them (0 before one).
type ggmlRetry struct {
	held  []heldMessage
	retry int64
}

// ggmlFailure reports whether m is a llama.cpp allocation failure whose
// later lines may show a retry (see above).
func ggmlFailure(m Message) bool {
	return m.Generation == GenCUDAError && Library(m.Text) == "llama.cpp (ggml)"
}

// holdGGML holds a llama.cpp allocation failure (see ggmlRetry).
func (r *Reader) holdGGML(m Message, frames []tbFrame, line int64) {
	g := r.ggml
	if g == nil {
		g = &ggmlRetry{}
		r.ggml = g
	}
	if len(g.held) == maxHeldGGML {
		r.addMessage(g.held[0].msg, g.held[0].frames, g.held[0].line)
		g.held = g.held[1:]
	}
	g.held = append(g.held, heldMessage{msg: m, frames: frames, line: line})
	if r.progressAt == nil {
		r.progressAt = map[int64]int64{}
	}
	r.progressAt[line] = r.progressBefore(m.Prefix, line)
}

// llamaProgressRe matches llama.cpp's lines that show it went on after
// an allocation failure: the line of the failure's caller, which
// returned the error ("llama_kv_cache_update_impl: failed to allocate
// compute buffers"; llama.cpp logs each failure's chain once, so the
// next failure is another call), and llama-server's lines of a request
// served ("slot update_slots: id  0 | task 12 | ...", "log_server_r:
// request: POST ...", "all slots are idle"); and Ollama's runner's
// record of a load request it was sent ("msg=load request=\"{Operation:alloc
// ... GPULayers:36[...]", "msg=\"load request\""): Ollama retries a load
// that failed with fewer layers on the GPU, and each attempt is another
// call.
var llamaProgressRe = lazyre.New(`\b\w+: failed to allocate compute (?:pp |tg )?buffers|\bslot\s+\w+: id\s+\d+ \| task -?\d+|\blog_server_r: (?:done )?request|\ball slots are idle|\bmsg=(?:load request=|"load request")`)

// llamaProgressWords are words each of llamaProgressRe's forms holds.
var llamaProgressWords = []string{"failed to allocate compute", " | task ", "log_server_r", "all slots are idle", "load request"}

// llamaProgressHeads is the set of llamaProgressWords' heads, made on
// first use.
var llamaProgressHeads = sync.OnceValue(func() *headSet { return newHeadSet(llamaProgressWords) })

// seeLlamaProgress remembers line as its process's last progress line
// when it is one of llama.cpp's (llamaProgressRe): the same failure
// printed again after it is another failure (see the messages table's
// progress_line).
func (r *Reader) seeLlamaProgress(line string) {
	if !llamaProgressHeads().mayHold(line, 0) {
		return // none of llamaProgressWords is on the line
	}
	if !llamaProgressRe.MatchString(line) {
		return
	}
	mark := processMark(line)
	if r.progress == nil {
		r.progress = map[string]progressMark{}
	}
	if _, ok := r.progress[mark]; ok || len(r.progress) < maxProgressMarks {
		r.progress[mark] = progressMark{"llama.cpp", r.line}
	}
}

// seeGGML reads a line after held llama.cpp failures, before the line
// itself is read for messages (addLine calls it first).
func (r *Reader) seeGGML(line string) {
	r.seeLlamaProgress(line)
	g := r.ggml
	if g == nil || strings.TrimSpace(line) == "" {
		return
	}
	if g.retry == 0 {
		switch {
		case strings.Contains(line, llamaRetryPhrase):
			g.retry = r.line
		case strings.Contains(line, "failed to allocate") || ggmlFailureLineRe.MatchString(line):
			// The chain of the failure held, or the next failure.
		default:
			r.settleGGML(nil, "")
		}
		return
	}
	if ggmlFailureLineRe.MatchString(line) {
		r.settleGGML(nil, fmt.Sprintf("the retry failed too (line %d: %s)", r.line, clip(strings.TrimSpace(line))))
		return
	}
	for _, p := range llamaFatalPhrases {
		if strings.Contains(line, p) {
			r.settleGGML(nil, fmt.Sprintf("the retry failed too (line %d: %s)", r.line, clip(strings.TrimSpace(line))))
			return
		}
	}
	for _, p := range llamaDonePhrases {
		if strings.Contains(line, p) {
			r.settleGGML(&line, "")
			return
		}
	}
}

// settleGGML decides the failures held: done, the line of a context made
// after a retry, makes them one warning (a recovered allocation);
// otherwise each is an OOM, and failed, when not "", says how the retry
// failed.
func (r *Reader) settleGGML(done *string, failed string) {
	g := r.ggml
	r.ggml = nil
	if g == nil || len(g.held) == 0 {
		return
	}
	first, last := g.held[0], g.held[len(g.held)-1]
	failures := "an allocation failure"
	if len(g.held) > 1 {
		failures = fmt.Sprintf("%d allocation failures, lines %d to %d,", len(g.held), first.line, last.line)
	}
	text := clip(first.msg.Text)
	if done != nil {
		const format = "llama.cpp reports %s (%s) while it reserved its compute buffers with pipeline parallelism; it retried without pipeline parallelism (line %d) and the retry succeeded (line %d: %s): a recovered allocation, not an OOM, so it is not counted as one; the run goes on with one copy of the compute buffers (less overlap between GPUs, so prompt processing may be slower); more free GPU memory, a smaller context (--ctx-size) or batch (--ubatch-size) let the first reservation fit"
		w := fmt.Sprintf(format, failures, text, g.retry, r.line, clip(strings.TrimSpace(*done)))
		r.meta.Warnings.Linef(int(first.line), "%s", w)
		r.meta.NotOOMs.Linef(int(first.line), "%s", w)
		return
	}
	for _, h := range g.held {
		r.addMessage(h.msg, h.frames, h.line)
	}
	if failed != "" {
		r.meta.Warnings.Linef(int(first.line), "llama.cpp retried without pipeline parallelism (line %d) after %s (%s), and %s: counted as an OOM", g.retry, failures, text, failed)
	}
}

// finishGGML settles the failures held at the text's end: OOMs, with a
// warning when a retry line came after them whose outcome the text does
// not show.
func (r *Reader) finishGGML() {
	g := r.ggml
	if g == nil || len(g.held) == 0 {
		r.ggml = nil
		return
	}
	retry, first := g.retry, g.held[0]
	r.settleGGML(nil, "")
	if retry > 0 {
		r.meta.Warnings.Linef(int(first.line), "llama.cpp retried without pipeline parallelism (line %d) after its allocation failed (%s), and the text ends before any line that tells whether the retry succeeded (its compute buffer sizes, \"model loaded\") or failed (\"failed to allocate compute pp buffers\", \"failed to create context\"): counted as an OOM; a log that goes on past the retry tells", retry, clip(first.msg.Text))
	}
}
