package pipeline

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/gpuleak/gpuleak/analyze/profiler"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/kineto"
	"github.com/gpuleak/gpuleak/report"
)

// The memory timeline family: torch.profiler export_memory_timeline
// outputs (.json, .raw.json.gz, and the .html picture, refused with a
// request for the others).
func init() {
	register(&family{
		name:    "pytorch-memory-timeline",
		order:   30,
		formats: []parse.Format{kineto.FormatMemoryTimeline, kineto.FormatMemoryTimelineRaw, kineto.FormatMemoryTimelineHTML},
		sniff:   kineto.SniffTimeline,
		analyze: analyzeTimeline,
	})
}

// analyzeTimeline reads an export_memory_timeline output: a finding per
// category of tensor, a leak for each whose floor keeps rising.
func analyzeTimeline(_ *runner, in *parse.Input, _ []byte, format parse.Format) (report.Input, []report.Finding, error) {
	if format == kineto.FormatMemoryTimelineHTML {
		return report.Input{}, nil, &parse.Error{File: in.Name, Offset: -1,
			Msg: "this is export_memory_timeline's HTML page: it holds only a picture (a PNG) of the timeline, not its numbers; export it again with a path ending in .json (times and sizes by category) or .raw.json.gz (every event), which gpuleak reads"}
	}
	tl, err := kineto.ReadTimeline(in.Reader(), in.Name, format == kineto.FormatMemoryTimelineRaw)
	if err != nil {
		return report.Input{}, nil, err
	}
	rin := report.Input{Path: in.Name, Format: string(format)}
	if len(tl.TimesUs) == 0 {
		what := "the memory timeline is empty"
		if format == kineto.FormatMemoryTimelineRaw {
			what = "the memory timeline is empty (an empty JSON array, [], as export_memory_timeline writes a .raw.json with no event)"
		}
		why := what + ": it holds no events, nothing can be judged from it; no tensor was seen on the device (was it exported for the right device, e.g. device=\"cuda:0\", and after the profiled steps?)"
		rin.Warnings = append(rin.Warnings, why)
		rin.LeaksUnjudged, rin.Empty = "the memory timeline is empty", why
		return rin, nil, nil
	}
	var fs []report.Finding
	gs := profiler.AnalyzeTimeline(tl)
	few := fmt.Sprintf("the timeline has %s, too few to judge growth", counted(len(tl.TimesUs), "point", "points"))
	if len(tl.TimesUs) == 1 {
		// A profiled region with one allocation (or every change at one
		// microsecond): a level, no course over time.
		few = "the timeline has 1 point: one point cannot show growth; profile several steps of the loop (prof.step() after each) so that memory is seen over time"
	}
	sc := profiler.CountTimelineSteps(tl)
	steps := sc.Steps
	stepsSeen := fmt.Sprintf("the timeline shows %s (its memory outside parameters, optimizer state and temporaries fell back %s)", counted(steps, "step", "steps"), counted(steps, "time", "times"))
	switch {
	case sc.Backward > sc.Falls:
		// The gradients' rises are the evidence: say what the memory's
		// falls showed beside them.
		fell := "never fell back by a quarter of a step's rise (steps that keep most of what they allocate)"
		if sc.Falls > 0 {
			fell = fmt.Sprintf("fell back by a quarter of a step's rise only %s", counted(sc.Falls, "time", "times"))
		}
		stepsSeen = fmt.Sprintf("the timeline shows %s: gradients were made %s, as each backward pass makes them before zero_grad frees them, while its memory outside parameters, optimizer state and temporaries %s",
			counted(steps, "step", "steps"), counted(sc.Backward, "time", "times"), fell)
		if sc.AutogradPasses > sc.GradientRises {
			// Gradients kept between steps rise once: the backward passes
			// are seen in the gradients of intermediate results.
			grads := fmt.Sprintf("the gradients rose only %s (kept between steps, as zero_grad(set_to_none=False) keeps them)", counted(sc.GradientRises, "time", "times"))
			switch {
			case sc.GradientRises == 0:
				grads = "no gradient rose from its least to its most"
			case sc.GradientRises > 1:
				// Freed between rises, so not kept: zero_grad ran once
				// every few backward passes.
				grads = fmt.Sprintf("the gradients rose only %d times (once an optimizer step, when gradients are accumulated over several backward passes)", sc.GradientRises)
			}
			stepsSeen = fmt.Sprintf("the timeline shows %s: %s made and freed the gradients of intermediate results (autograd detail), while %s and its memory outside parameters, optimizer state and temporaries %s",
				counted(steps, "step", "steps"), counted(sc.AutogradPasses, "backward pass", "backward passes"), grads, fell)
		}
	case steps == 0:
		grads := "no gradient was made (no backward pass)"
		for _, g := range gs {
			if g.Category == "gradient" {
				grads = "its gradients never rose from their least to their most (gradients kept between steps)"
			}
		}
		stepsSeen = "the timeline shows no step: " + grads + ", and its memory outside parameters, optimizer state and temporaries never fell back by a quarter of what it rose: one forward pass, or a loop whose steps keep more than three quarters of what they allocate, which the timeline alone cannot tell apart"
	}
	unjudged := fmt.Sprintf("%s, too few to judge growth across steps (%d are needed); profile more steps of the loop", stepsSeen, snapshot.MinIterations)
	traceSteps := "the profiler trace of the same run (export_chrome_trace, with prof.step() after each step) marks its steps with ProfilerStep#N spans"
	n := len(tl.TimesUs)
	switch {
	case steps == 0:
		// More steps would not show what the memory's shape cannot. Who
		// shows unjudged says that growth cannot be judged (the finding's
		// "growth across steps cannot be judged:", a gate's "not judged
		// on this input:"), so it says why only.
		unjudged = fmt.Sprintf("%s; %s", stepsSeen, traceSteps)
	case steps == 1 && sc.Backward == 0 && len(sc.Ends) == 1 && sc.Ends[0] >= n-max(3, n/20):
		// The one fall reaches its low only at the timeline's end: memory
		// rose through the profiled span and was freed at its end. That
		// is one forward pass, and also a loop whose steps keep more than
		// three quarters of what they allocate, freed together when the
		// function that kept them returned (a real H200 recording: 8
		// eval steps that kept their graphs, h46g_eval_keep_graph_8).
		// More steps of the same loop would show the same shape.
		unjudged = fmt.Sprintf("%s, only at the timeline's end: memory rose through the profiled span and was freed at its end, as one forward pass does and as a loop does whose steps keep more than three quarters of what they allocate until a teardown frees them together (a function that kept them returned), which the timeline alone cannot tell apart, and more steps of the same loop would show the same; %s", stepsSeen, traceSteps)
	}
	switch {
	case len(gs) > 0 && gs[0].Windows == 0:
		// Every category is cut into the same windows, or none.
		rin.LeaksUnjudged = few
	case steps < snapshot.MinIterations:
		rin.LeaksUnjudged = unjudged
	}
	for _, g := range gs {
		f := report.Finding{Kind: report.KindRetained, Path: in.Name, Source: string(format), Bytes: g.EndBytes,
			Site: report.Frame{Function: g.Category}}
		span := float64(g.SpanUs) / 1e6
		// The least held at the first and last windows, told apart where
		// they differ (a rise of 300 MiB on 20 GiB is not "20 GiB to 20
		// GiB").
		from, to := report.FromTo(g.FromBytes, g.ToBytes)
		end := report.LikeSize(g.EndBytes, to, g.ToBytes)
		switch {
		case g.Grows && g.Teardown:
			// The loop's end, not the teardown's, is what the steps kept.
			f.Kind, f.Bytes = report.KindLeak, g.LoopEndBytes
			f.Message = fmt.Sprintf("%s memory keeps growing over the timeline's %s: the least it held between steps rose in %d of %d windows of the steps, from %s to %s (%s/s%s), %s at the end of the last step; the timeline then ends with a teardown: after the last step it allocated nothing and freed %s, all categories together, below what every step's end held, down to %s of %s at the end (a function that kept them returned, or they were deleted), so growth was judged over the steps before it; find which %s tensors are kept from step to step",
				g.Category, counted(g.Steps, "step", "steps"), g.GrewIn, g.Windows-1, from, to, humanize.IBytes(uint64(max(g.BytesPerSecond, 0))), perStep(g),
				humanize.IBytes(uint64(g.LoopEndBytes)), humanize.IBytes(uint64(g.TeardownFreedBytes)), humanize.IBytes(uint64(g.EndBytes)), g.Category, g.Category)
		case g.Grows:
			f.Kind = report.KindLeak
			f.Message = fmt.Sprintf("%s memory keeps growing: the least it held between steps rose in %d of %d windows of the timeline, from %s to %s (%s/s%s), %s at the end of %.2f s; find which %s tensors are kept from step to step",
				g.Category, g.GrewIn, g.Windows-1, from, to, humanize.IBytes(uint64(max(g.BytesPerSecond, 0))), perStep(g), end, span, g.Category)
		case g.Windows == 0:
			f.Message = fmt.Sprintf("%s memory: %s at the end, %s at most; %s", g.Category, humanize.IBytes(uint64(g.EndBytes)), humanize.IBytes(uint64(g.PeakBytes)), few)
		case g.Steps < snapshot.MinIterations:
			f.Message = fmt.Sprintf("%s memory: growth across steps cannot be judged: %s; the least it held went from %s to %s over %s of the timeline; %s at the end, %s at most",
				g.Category, unjudged, from, to, counted(g.Windows, "window", "windows"), humanize.IBytes(uint64(g.EndBytes)), humanize.IBytes(uint64(g.PeakBytes)))
		default:
			f.Message = fmt.Sprintf("%s memory does not keep growing: the least it held between steps went from %s to %s over %s; %s at the end, %s at most",
				g.Category, from, to, counted(g.Windows, "window", "windows"), humanize.IBytes(uint64(g.EndBytes)), humanize.IBytes(uint64(g.PeakBytes)))
		}
		if f.Kind == report.KindRetained && g.EndBytes == 0 {
			continue // nothing held at the end: not worth a finding
		}
		fs = append(fs, f)
	}
	if w := unjudgedFreed(rin.LeaksUnjudged, gs, len(sc.Ends), len(fs) == 0); w != "" {
		rin.Warnings = append(rin.Warnings, w)
	}
	span := fmt.Sprintf("%d points over %.2f s, %s", len(tl.TimesUs), float64(tl.TimesUs[len(tl.TimesUs)-1]-tl.TimesUs[0])/1e6, stepsSeen)
	if len(tl.TimesUs) == 1 {
		span = "1 point"
	}
	rin.Warnings = append(rin.Warnings, fmt.Sprintf("a memory timeline of one device (the file does not say which), %s; categories are PyTorch's guesses from the autograd graph (\"unknown\" when it could not tell)", span))
	return rin, fs, nil
}

// stepHeld are the categories a step can keep from one step to the
// next; parameters and optimizer state are the model's, made once, and
// temporaries are freed by the op that made them.
var stepHeld = map[string]bool{"input": true, "activation": true, "gradient": true, "autograd_detail": true, "unknown": true}

// unjudgedFreed says that growth could not be judged (why, from
// LeaksUnjudged) and what the categories a step can keep (stepHeld)
// that held nothing at the end, and so have no finding, held in
// between: for each that held more at the last step's end than at the
// first's, both (a loop's kept tensors, freed at its end, are only seen
// so); with fewer than two step ends (ends, TimelineStepCount Ends), for
// each whose least in a window rose, from its first window's floor to
// its highest. It is "" when growth was judged, or when no such category
// rose and some finding says why growth was not judged (noFindings
// false).
func unjudgedFreed(why string, gs []profiler.CategoryGrowth, ends int, noFindings bool) string {
	if why == "" {
		return ""
	}
	var rose []string
	for _, g := range gs {
		switch {
		case g.EndBytes != 0 || !stepHeld[g.Category]:
		case g.LastEndBytes > g.FirstEndBytes:
			rose = append(rose, fmt.Sprintf("%s held %s at the first step's end and %s at the last's (about %s a step)",
				g.Category, humanize.IBytes(uint64(g.FirstEndBytes)), humanize.IBytes(uint64(g.LastEndBytes)), humanize.IBytes(uint64(g.PerStepBytes))))
		case ends < 2 && g.Windows > 0 && g.HighFloorBytes > g.FromBytes:
			rose = append(rose, fmt.Sprintf("the least %s held in a window of the timeline rose from %s to %s", g.Category,
				humanize.IBytes(uint64(g.FromBytes)), humanize.IBytes(uint64(g.HighFloorBytes))))
		}
	}
	if len(rose) == 0 && !noFindings {
		return ""
	}
	msg := "growth across steps cannot be judged: " + why
	switch {
	case len(rose) > 0:
		msg += fmt.Sprintf("; what it saw: %s, all of it freed by the timeline's end (0 B)", strings.Join(rose, "; "))
	case noFindings:
		msg += "; no category held memory at the timeline's end"
	}
	return msg
}

// perStep is ", about X a step" for a category that held more at the
// last step's end than at the first's, or "".
func perStep(g profiler.CategoryGrowth) string {
	if g.PerStepBytes <= 0 {
		return ""
	}
	return fmt.Sprintf(", about %s a step from the first step's end to the last's", humanize.IBytes(uint64(g.PerStepBytes)))
}

// counted counts n things in English: "1 point", "2 points".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
