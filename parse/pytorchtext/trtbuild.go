package pytorchtext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
)

// TensorRT's builder times many implementations ("tactics") of each layer
// and allocates each one's workspace as it goes. When its default
// allocator's cudaMalloc fails it logs the failure at ERROR level (8.x
// and later: "[defaultAllocator.cpp::allocate::N] Error Code 1: Cuda
// Runtime (out of memory)"; 7.x: "Cuda Error in allocate: 2 (out of
// memory)"), then skips that tactic and goes on: "Skipping tactic N due
// to insufficient memory on requested size of B detected for tactic
// 0x..." (8.4 and later; "insuficient" and a size in MB in 8.0 to 8.2,
// "oom error" in some), with "Requested amount of GPU memory (B bytes)
// could not be allocated" before it; 7.x: "GPU memory allocation error
// during getBestTactic: LAYER", "Get cuda error during timeReformat".
// NVIDIA's answer to such lines (NVIDIA/TensorRT-LLM#493): "it is a
// warning. As long as the TensorRT engine is built successfully, it's not
// a problem". The build fails only when no tactic of a layer is left:
// "Could not find any implementation for node" (7.x "Internal error:
// could not find any implementation for node"), "OutOfMemory Error in
// ...computeCosts", trtexec's "Engine could not be created" and "&&&&
// FAILED".
//
// So the reader holds each TensorRT allocator failure until the lines
// after it tell: a line of a failed build, or of a run that ended (a
// traceback's exception, "Segmentation fault", "core dumped"), makes the
// failures held OOMs; a skip line marks them skipped; a build that
// completes ("Engine generation completed", trtexec's "Engine built in",
// "&&&& PASSED") or the text's end with every failure skipped makes them
// one warning (not an OOM). A failure no skip line followed stays an
// OOM; one that ends the text is an OOM with a warning that what became
// of it cannot be told. The allocator's "Requested amount of GPU memory
// (B bytes)" on the line right after a failure is its request.

// trtSkipPhrases are the builder's words, on a line after an allocator
// failure, that it skipped the tactic whose memory it could not
// allocate (see above): each such line is one tactic skipped.
var trtSkipPhrases = []string{"error during getBestTactic", "error during timeReformat"}

// trtFatalPhrases are the words of a TensorRT build that failed (see
// above), and trtEndPhrases those of a run that ended (a crash), which
// need not be the build's doing.
var (
	trtFatalPhrases = []string{"ould not find any implementation for node", "OutOfMemory Error in ", "Engine could not be created",
		"Unable to create engine", "&&&& FAILED"}
	trtEndPhrases = []string{"Segmentation fault", "core dumped"}
)

// trtDonePhrases are the words of a TensorRT build that completed:
// the builder's INFO "Engine generation completed in S seconds." (8.2
// and later), trtexec's "Engine built in S sec." and its final status.
var trtDonePhrases = []string{"Engine generation completed in ", "Engine built in ", "&&&& PASSED"}

// trtBytesRes read the bytes a TensorRT builder line says a tactic asked
// for: the allocator's WARNING (or ERROR) "Requested amount of GPU memory
// (B bytes) could not be allocated", the skip line of 8.4 and later
// ("insufficient memory on requested size of B", "oom error on requested
// size of B", bytes; 8.0 to 8.2's "insuficient memory on requested size
// of N" is in MB and is not read), and Myelin's "User allocator error
// allocating B-byte buffer".
var trtBytesRes = []*lazyre.Regexp{
	lazyre.New(`Requested amount of GPU memory \((\d{1,20}) bytes\) could not be allocated`),
	lazyre.New(`(?:insufficient memory|oom error) on requested size of (\d{1,20}) detected for tactic`),
	lazyre.New(`User allocator error allocating (\d{1,20})-byte buffer`),
}

// maxHeldTRT bounds the TensorRT failures held at once (a builder may
// log thousands); past it the oldest are counted as OOMs, as if no line
// had followed them.
const maxHeldTRT = 1024

// trtHeld is a TensorRT allocator failure waiting for the lines after it.
type trtHeld struct {
	msg     Message
	frames  []tbFrame
	line    int64
	skipped bool // a skip line followed it
}

// trtBuild is what the reader holds of a TensorRT build in progress.
type trtBuild struct {
	held []trtHeld
	// skips counts the skip lines after the first failure held;
	// largest is the largest request in bytes the builder's lines gave
	// since then, -1 when none did.
	skips   int
	largest int64
	// followed says a line came after the last failure held.
	followed bool
}

// trtFailure reports whether m is a TensorRT allocator failure that the
// lines after it may show the builder skipped.
func trtFailure(m Message) bool {
	return m.Generation == GenCUDAError && Library(m.Text) == "TensorRT"
}

// holdTRT holds a TensorRT allocator failure (see trtBuild).
func (r *Reader) holdTRT(m Message, frames []tbFrame, line int64) {
	b := r.trt
	if b == nil {
		b = &trtBuild{largest: -1}
		r.trt = b
	}
	if len(b.held) == maxHeldTRT {
		r.meta.Warnings.Once("trt-held", parse.InlineNote(int(line), -1, "more than %d TensorRT allocation failures before a line that tells what became of them; the earliest are counted as OOMs", maxHeldTRT))
		h := b.held[0]
		b.held = b.held[1:]
		r.addMessage(h.msg, h.frames, h.line)
		r.drainBehind()
	}
	if n := len(b.held); n > 0 && strings.HasPrefix(m.Text, trtVMemPhrase) && m.Requested >= 0 && b.held[n-1].msg.Requested == m.Requested {
		// "Error Code 2: OutOfMemory (Requested size was B bytes.)" of
		// the caller (an execution context, a buffer) after the
		// allocator's failure of the same B bytes: one failure.
		return
	}
	b.held = append(b.held, trtHeld{msg: m, frames: frames, line: line})
	b.followed = false
}

// seeTRT reads a line after held TensorRT failures: a skip, a request's
// size, a build that failed or completed. line holds no failure itself
// yet (addLine calls it first).
func (r *Reader) seeTRT(line string) {
	b := r.trt
	if b == nil || strings.TrimSpace(line) == "" {
		return
	}
	if n := trtRequested(line); n >= 0 && !b.followed && b.held[len(b.held)-1].msg.Requested < 0 {
		// The allocator's own words right after its status (8.4 and
		// later): the bytes the failed cudaMalloc asked for.
		b.held[len(b.held)-1].msg.Requested = n
	}
	b.followed = true
	for _, p := range trtFatalPhrases {
		if strings.Contains(line, p) {
			r.settleTRT(trtFailed)
			return
		}
	}
	for _, p := range trtEndPhrases {
		if strings.Contains(line, p) {
			r.settleTRT(trtEnded)
			return
		}
	}
	for _, p := range trtDonePhrases {
		if strings.Contains(line, p) {
			r.settleTRT(trtBuilt)
			return
		}
	}
	for _, re := range trtBytesRes {
		if m := re.FindStringSubmatch(line); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil && n > b.largest {
				b.largest = n
			}
		}
	}
	if trtSkipLine(line) {
		b.skips++
		for i := range b.held {
			b.held[i].skipped = true
		}
	}
}

// trtRequested returns the bytes of the allocator's "Requested amount
// of GPU memory (B bytes) could not be allocated" on line, -1 when the
// line is not that.
func trtRequested(line string) int64 {
	if m := trtBytesRes[0].FindStringSubmatch(line); m != nil {
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return n
		}
	}
	return -1
}

// trtSkipLine reports whether line is the builder's word that it skipped
// a tactic for memory (trtSkipPhrases, or "Skipping tactic" with words of
// memory: "insufficient memory", "oom error", "User allocator error").
func trtSkipLine(line string) bool {
	if i := strings.Index(line, "Skipping tactic"); i >= 0 {
		rest := line[i:]
		return strings.Contains(rest, "memory") || strings.Contains(rest, "oom error") || strings.Contains(rest, "allocat")
	}
	for _, p := range trtSkipPhrases {
		if strings.Contains(line, p) {
			return true
		}
	}
	return false
}

// endTRT settles the failures held when the run ended with a Python
// exception, line its text (a traceback's last line): one that names
// the engine or its build ("'NoneType' object has no attribute
// 'serialize'" of an engine the builder did not make, "Failed to build
// engine") says the build failed; another (an assertion, a KeyError, an
// interrupt) ended the run for a reason of its own.
func (r *Reader) endTRT(line string) {
	if r.trt == nil {
		return
	}
	out := trtEnded
	if trtBuildWordsRe.MatchString(line) {
		out = trtFailed
	}
	r.settleTRT(out)
}

// trtBuildWordsRe matches an exception's text that names a TensorRT
// engine or its build.
var trtBuildWordsRe = lazyre.New(`(?i)engine|tensorrt|\btrt|serializ|build|execution_?context`)

// trtOutcome is what a line tells of the build after held failures.
type trtOutcome int

const (
	trtFailed trtOutcome = iota // the build failed: each failure is an OOM
	trtBuilt                    // it completed
	trtEnded                    // the run ended (an exception, a crash), whatever the build did
)

// settleTRT decides the failures held when a line tells what became of
// the build. Where it failed, each failure is an OOM. Where it completed,
// or the run ended for a reason of its own (an exception, a crash that
// need not be the build's), each failure a skip line followed was a
// tactic the builder skipped (one warning), and a failure no skip line
// followed (a runtime's, an execution context's) is an OOM.
func (r *Reader) settleTRT(out trtOutcome) {
	b := r.trt
	r.trt = nil
	defer r.drainBehind() // the messages after them waited (earliestOpen)
	if b == nil || len(b.held) == 0 {
		return
	}
	var skipped []trtHeld
	for _, h := range b.held {
		if out != trtFailed && h.skipped {
			skipped = append(skipped, h)
			continue
		}
		r.addMessage(h.msg, h.frames, h.line)
	}
	if len(skipped) == 0 {
		return
	}
	why := "the build completed after it"
	if out == trtEnded {
		why = "the run ended later (an exception or a crash) with no line of a failed build (\"Could not find any implementation for node\", \"Engine could not be created\") between: if that ending was the build's failing for want of memory, the log does not say so"
	}
	r.noteSkippedTRT(b, skipped, why)
}

// finishTRT settles the failures held at the text's end: those a skip
// line followed are tactics the builder skipped (no line of a failed
// build came after them); the others are OOMs, and the last one's line,
// when it ends the text, gets a warning that what became of it cannot be
// told.
func (r *Reader) finishTRT() {
	b := r.trt
	r.trt = nil
	if b == nil || len(b.held) == 0 {
		return
	}
	var skipped []trtHeld
	for _, h := range b.held {
		if h.skipped {
			skipped = append(skipped, h)
			continue
		}
		r.addMessage(h.msg, h.frames, h.line)
	}
	if last := b.held[len(b.held)-1]; !last.skipped && !b.followed {
		const format = "TensorRT's allocator failed (%s) on the text's last line: TensorRT's builder logs \"Skipping tactic\" after such a failure when it skips that tactic and goes on, and a failed build logs \"Could not find any implementation for node\"; the text ends before either, so whether the builder went on cannot be told: it is counted as an OOM"
		r.meta.Warnings.Linef(int(last.line), format, clip(last.msg.Text))
	}
	if len(skipped) > 0 {
		r.noteSkippedTRT(b, skipped, "the text ends with no line of a failed build (\"Could not find any implementation for node\", \"Engine could not be created\") after it, nor one of a completed build: if the build failed further on, it failed for want of memory")
	}
}

// noteSkippedTRT warns, on the first one's line, that TensorRT
// allocator failures were tactics the builder skipped: not OOMs.
func (r *Reader) noteSkippedTRT(b *trtBuild, held []trtHeld, why string) {
	first := held[0]
	failures := "an allocation failure"
	if len(held) > 1 {
		failures = fmt.Sprintf("%d allocation failures, lines %d to %d,", len(held), first.line, held[len(held)-1].line)
	}
	tactics := "it skipped the tactic"
	switch {
	case b.skips == 1:
		tactics = "it skipped 1 tactic for memory"
	case b.skips > 1:
		tactics = fmt.Sprintf("it skipped %d tactics for memory", b.skips)
	}
	if b.largest >= 0 {
		tactics += fmt.Sprintf(", the largest request %d bytes (%s)", b.largest, FormatSize(b.largest))
	}
	const format = "TensorRT's allocator reports %s (%s) while the builder timed tactics: %s and went on, and %s; a skipped tactic is not an OOM (the engine is built from the tactics that fit, maybe slower), so it is not counted as one; a smaller workspace limit (the memory pool limit, trtexec --memPoolSize) or a GPU free of other processes lets the builder try them"
	text := clip(first.msg.Text)
	r.meta.Warnings.Linef(int(first.line), format, failures, text, tactics, why)
	r.meta.NotOOMs.Linef(int(first.line), format, failures, text, tactics, why)
}
