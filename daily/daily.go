package daily

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/sanitizer"
	"github.com/gpuleak/gpuleak/report"
)

// Analysis is what the analysis of one group's files says.
type Analysis struct {
	// Report holds the inputs that were read and their findings (all of
	// them: no --top); nil when none could be read.
	Report *report.Report
	// Errors are the inputs that could not be read, by path, with their
	// positioned errors; an error that wraps parse.ErrUnknownFormat means
	// the file is no artifact gpuleak reads (it is counted as skipped).
	Errors map[string]error
}

// AnalyzeFunc analyses the files of one group (one job's artifacts)
// together, as "gpuleak analyze" does. It is the one seam through which
// the daily report reads files; an error is a failure of the whole group
// (its files are then listed as unreadable).
type AnalyzeFunc func(ctx context.Context, paths []string) (*Analysis, error)

// Options control a report.
type Options struct {
	Roots   []string
	Pattern *Pattern // --group-by; nil: each directory is a job
	// From and To bound the artifacts kept by their own timestamps (zero:
	// unbounded); an input without one is dated by its file's
	// modification time.
	From, To time.Time
	// Workers analysing groups at once; 0: GOMAXPROCS.
	Workers int
	// Progress, when set, gets a line per finished group ("\r"-updated).
	Progress io.Writer
	Tool     report.Tool
}

// Run walks the roots, analyses every group with analyze on Workers
// goroutines, and folds the results into the daily report. Errors: a root
// that cannot be walked, ctx's error.
func Run(ctx context.Context, opt Options, analyze AnalyzeFunc) (*report.Daily, error) {
	walked, err := Walk(opt.Roots, opt.Pattern)
	if err != nil {
		return nil, err
	}
	groups := walked.Groups
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	total := 0
	for _, g := range groups {
		total += len(g.Files)
	}
	type result struct {
		g   Group
		a   *Analysis
		err error
	}
	jobs := make(chan Group)
	results := make(chan result, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for g := range jobs {
				paths := make([]string, len(g.Files))
				for i, f := range g.Files {
					paths[i] = f.Path
				}
				a, err := analyze(ctx, paths)
				results <- result{g, a, err}
			}
		})
	}
	// Daily reports' JSON among the files are merged, not analysed.
	var reports []string
	for i := range groups {
		kept := groups[i].Files[:0]
		for _, fl := range groups[i].Files {
			if isDailyReport(fl.Path) {
				reports = append(reports, fl.Path)
				continue
			}
			kept = append(kept, fl)
		}
		groups[i].Files = kept
	}
	go func() {
		defer close(jobs)
		for _, g := range groups {
			if len(g.Files) == 0 {
				continue
			}
			select {
			case jobs <- g:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	f := newFolder(opt)
	f.d.Summary.Files = total
	f.skipped(walked)
	for _, p := range reports {
		f.mergeDaily(p)
	}
	done := len(reports)
	for r := range results {
		f.fold(r.g, r.a, r.err)
		done += len(r.g.Files)
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "\rgpuleak report: %d/%d files, %d/%d jobs", done, total, f.d.Summary.Jobs, len(groups))
		}
	}
	if opt.Progress != nil && len(groups) > 0 {
		fmt.Fprintln(opt.Progress)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f.finish(), nil
}

// folder accumulates groups' results into the report, one at a time.
type folder struct {
	opt      Options
	d        *report.Daily
	hosts    map[string]bool
	sites    map[string]*report.DailyLeakSite
	siteBy   map[string]sizedPath // the finding that gave a site its message
	gpus     map[string]*gpuAcc
	oomDays  map[[2]string]int
	days     map[string]bool
	moreOOMs int
	dated    int             // inputs dated by their file's modification time
	datedAs  map[string]bool // their formats (Input.Format)
	merged   int             // daily reports merged (the weekly review)
	// toolErrorGroups counts the groups of tool errors listed or not
	toolErrorGroups int
	siteJob         map[string]bool // leak sites seen in the group being folded
	jobSeen         map[string]bool // jobs counted (host/job), each once
	// devices: the CUDA device indexes that inputs other than NVML logs
	// (snapshots, OOM messages, profiler traces, sanitizer reports) name,
	// by host and job; deviceKinds the kinds of input that named them.
	devices     map[[2]string]map[int]bool
	deviceKinds map[string]bool
	// hostGPUs: the NVML-sampled GPUs (keys of gpus) of each host.
	hostGPUs map[string]map[string]bool
	// findings of jobs read in the window but dated outside it, by kind,
	// and the first such jobs
	outside     map[report.Kind]int
	outsideJobs []string
}

// outsideOfJob counts a finding left out by the window in a job whose
// other inputs are in it.
func (f *folder) outsideOfJob(g Group, kind report.Kind) {
	if f.outside == nil {
		f.outside = map[report.Kind]int{}
	}
	f.outside[kind]++
	f.outsideJobs = addBounded(f.outsideJobs, g.Name(), 5)
}

// countJob counts a job once, however many days' reports name it.
func (f *folder) countJob(name string) {
	if f.jobSeen == nil {
		f.jobSeen = map[string]bool{}
	}
	if !f.jobSeen[name] {
		f.jobSeen[name] = true
		f.d.Summary.Jobs++
	}
}

type sizedPath struct {
	bytes int64
	path  string
}

type gpuAcc struct {
	g report.DailyGPU
	// base is the key of the GPU without its name (host and index, or
	// job and index); name the GPU's name as the logs give it (the
	// longest seen), norm its normGPUName ("" when no log names it).
	base, name, norm string
	// lowest used memory per day, for the baseline creep
	low map[string]int64
	// curves: one per series (the GPU, or a pid), from the log with the
	// most samples; charted the GPU first, then the processes by peak.
	curves map[string]curveCand
}

type curveCand struct {
	c       report.DailyCurve
	gpu     bool
	samples int
	peak    int64
}

// maxCurveCands bounds the series a GPU's chart chooses from.
const maxCurveCands = 256

func newFolder(opt Options) *folder {
	d := &report.Daily{Schema: report.DailySchema, Tool: opt.Tool, Roots: opt.Roots,
		LeakSites: []report.DailyLeakSite{}, OOMs: []report.DailyFinding{}, OOMsByDay: []report.DailyCount{}, UndescribedOOMs: []report.DailyUndescribedOOMs{},
		GPUs: []report.DailyGPU{}, Fragmentation: []report.DailyFinding{}, Unreadable: []report.DailyInput{}, ReadInPart: []report.DailyInput{}, Skipped: []report.DailySkipped{},
		InputWarnings: []report.DailyInputWarnings{}, ToolErrors: []report.DailyToolError{},
		Jobs: []report.DailyJob{}, Days: []string{}, Warnings: []string{}}
	d.Summary.Worst = []report.DailyFinding{}
	if !opt.From.IsZero() {
		us := opt.From.UnixMicro()
		d.FromUs = &us
	}
	if !opt.To.IsZero() {
		us := opt.To.UnixMicro()
		d.ToUs = &us
	}
	return &folder{opt: opt, d: d, hosts: map[string]bool{}, sites: map[string]*report.DailyLeakSite{},
		siteBy: map[string]sizedPath{}, siteJob: map[string]bool{}, gpus: map[string]*gpuAcc{}, oomDays: map[[2]string]int{}, days: map[string]bool{}}
}

// date is a time's UTC date.
func date(us int64) string { return time.UnixMicro(us).UTC().Format(time.DateOnly) }

// fold adds one group's analysis.
func (f *folder) fold(g Group, a *Analysis, err error) {
	job := report.DailyJob{Host: g.Host, Job: g.Job}
	modUs := map[string]int64{}
	for _, fl := range g.Files {
		modUs[fl.Path] = fl.ModUs
	}
	if err != nil {
		for _, fl := range g.Files {
			f.unreadable(g, fl.Path, err)
		}
		return
	}
	for _, fl := range g.Files {
		e, bad := a.Errors[fl.Path]
		switch {
		case !bad:
		case errors.Is(e, parse.ErrUnknownFormat):
			f.skip(report.DailySkipped{Host: g.Host, Job: g.Job, Path: fl.Path, Reason: unrecognisedReason(fl.Path, e)})
		default:
			f.unreadable(g, fl.Path, e)
		}
	}
	if a.Report == nil {
		return
	}
	// When each input happened: its own latest timestamp, else its file's
	// modification time.
	inputUs := map[string]int64{}
	undated := map[string]bool{}     // inputs whose findings' times are not dates either
	assumed := map[string]*float64{} // logs without times whose period was assumed
	for _, in := range a.Report.Inputs {
		if in.Error != "" {
			continue
		}
		if in.AssumedIntervalS != nil && *in.AssumedIntervalS > 0 {
			assumed[in.Path] = in.AssumedIntervalS
		}
		undated[in.Path] = !ContentDated(in)
		us, ok := inputTime(in)
		if !ok {
			us = modUs[in.Path]
			f.dated++
			if f.datedAs == nil {
				f.datedAs = map[string]bool{}
			}
			f.datedAs[in.Format] = true
		}
		if !f.inWindow(us) {
			f.d.Summary.OutsideWindow++
			continue
		}
		inputUs[in.Path] = us
		job.Files++
		f.d.Summary.Read++
		if in.Format == string(sanitizer.FormatText) || in.Format == string(sanitizer.FormatXML) {
			f.d.Summary.SanitizerReports++
		}
		if note := report.ReadInPart(in); note != "" {
			f.readInPart(report.DailyInput{Host: g.Host, Job: g.Job, Path: in.Path, Error: note})
		}
		if len(in.Warnings) > 0 {
			n := min(len(in.Warnings), report.DailyMaxInputWarnings)
			f.inputWarnings(report.DailyInputWarnings{Host: g.Host, Job: g.Job, Path: in.Path, Format: in.Format, Date: date(us),
				Warnings: slices.Clone(in.Warnings[:n]), WarningsTotal: len(in.Warnings)})
		}
	}
	if job.Files == 0 {
		return
	}
	f.countJob(g.Name())
	if g.Host != "" {
		f.hosts[g.Host] = true
	}
	f.namedDevices(g, a.Report, inputUs)
	uuidOf := GPUUUIDs(a.Report.Findings)
	clear(f.siteJob) // a site counts each job once
	for _, fd := range a.Report.Findings {
		in, ok := inputUs[fd.Path]
		if !ok {
			// Outside the window, though another input of the job is in
			// it (an OOM message dated by its file, its snapshot by its
			// trace): the page says so rather than show the logs read and
			// no OOM.
			f.outsideOfJob(g, fd.Kind)
			continue
		}
		us := in
		if !undated[fd.Path] {
			us = findingTime(&fd, in)
		}
		if !f.inWindow(us) {
			f.outsideOfJob(g, fd.Kind)
			continue
		}
		day := date(us)
		f.days[day] = true
		df := report.DailyFinding{Host: g.Host, Job: g.Job, Date: day, Finding: fd}
		if fd.Host != "" && df.Host == "" {
			df.Host = fd.Host
			f.hosts[fd.Host] = true
		}
		job.Findings++
		switch fd.Kind {
		case report.KindLeak:
			job.Leaks++
			f.leak(g, df)
		case report.KindOOM:
			job.OOMs++
			f.oom(df)
		case report.KindTrend:
			df.AssumedIntervalS = assumed[fd.Path]
			if fd.Classification == "growing" {
				job.Growing++
				f.d.Summary.Growing++
				if fd.PID != nil {
					f.d.Summary.GrowingProcesses++
				}
			}
			f.trend(g, df, uuidOf)
		case report.KindFragmentation:
			f.d.Summary.Fragmentation++
			f.d.Fragmentation = appendBounded(f.d.Fragmentation, df, report.DailyMaxItems, fragLess)
		}
		if worthListing(&fd) {
			f.worst(df)
		}
	}
	f.undescribedOOMs(g, a.Report.Inputs, inputUs, &job)
	index := map[string]int{} // each input's errors, counted in its order
	for _, e := range a.Report.Errors {
		us, ok := inputUs[e.Path]
		if !ok {
			f.outsideOfJob(g, "compute-sanitizer error")
			continue
		}
		job.ToolErrors += max(e.Count, 1)
		f.toolError(report.DailyToolError{Host: g.Host, Job: g.Job, Date: date(us), Index: index[e.Path], ToolError: e})
		index[e.Path]++
	}
	f.d.Jobs = appendJob(f.d.Jobs, job)
}

// undescribedOOMs counts the out-of-memory errors the job's allocators
// counted beyond those its inputs describe: the largest count of any one
// stats set of the inputs read in the window (the counter is per process
// and cumulative: a summary printed twice is one process's), as the oom
// gate counts them.
func (f *folder) undescribedOOMs(g Group, ins []report.Input, inputUs map[string]int64, job *report.DailyJob) {
	var most report.DailyUndescribedOOMs
	for _, in := range ins {
		us, ok := inputUs[in.Path]
		if !ok {
			continue
		}
		for _, s := range in.AllocatorStats {
			if s.UndescribedOOMs > most.Count {
				most = report.DailyUndescribedOOMs{Host: g.Host, Job: g.Job, Date: date(us), Path: in.Path, Line: s.Line, Count: s.UndescribedOOMs}
			}
		}
	}
	if most.Count == 0 {
		return
	}
	f.days[most.Date] = true
	f.addUndescribedOOMs(most)
	job.UndescribedOOMs += int(most.Count)
}

// addUndescribedOOMs counts one job's undescribed OOMs and lists them.
func (f *folder) addUndescribedOOMs(u report.DailyUndescribedOOMs) {
	f.d.Summary.UndescribedOOMs += int(u.Count)
	f.d.UndescribedOOMs = appendBounded(f.d.UndescribedOOMs, u, report.DailyMaxItems, func(a, b *report.DailyUndescribedOOMs) bool {
		return jobName(a.Host, a.Job) < jobName(b.Host, b.Job) || (jobName(a.Host, a.Job) == jobName(b.Host, b.Job) && a.Date < b.Date)
	})
}

// skipped lists what the walk skipped: an unreadable entry (a dangling
// link, a directory without permission) as an unreadable input with its
// reason; a directory already walked by another path as a warning.
func (f *folder) skipped(w *WalkResult) {
	unlisted := w.Skipped - len(w.Skips)
	warned := 0
	for _, s := range w.Skips {
		if s.Unreadable {
			f.unreadable(Group{}, s.Path, errors.New(s.Reason))
			continue
		}
		f.skip(report.DailySkipped{Path: s.Path, Reason: s.Reason})
		if warned++; warned <= 20 {
			f.d.Warnings = append(f.d.Warnings, "skipped "+s.Path+": "+s.Reason)
		}
	}
	if warned > 20 {
		f.d.Warnings = append(f.d.Warnings, fmt.Sprintf("%d more directories already walked by another path were skipped", warned-20))
	}
	if unlisted > 0 {
		f.d.Summary.Unreadable += unlisted
		f.d.Warnings = append(f.d.Warnings, fmt.Sprintf("the walk skipped %d more entries (links, unreadable directories) than it lists", unlisted))
	}
}

// skip counts a file not read as an input and names it: the list keeps
// the first DailyMaxItems by path, whatever order the workers finish in.
func (f *folder) skip(s report.DailySkipped) {
	f.d.Summary.Skipped++
	f.d.Skipped = insertSkipped(f.d.Skipped, s)
}

// insertSkipped adds s to xs, sorted by path, keeping at most
// report.DailyMaxItems.
func insertSkipped(xs []report.DailySkipped, s report.DailySkipped) []report.DailySkipped {
	return appendBounded(xs, s, report.DailyMaxItems, func(a, b *report.DailySkipped) bool { return a.Path < b.Path })
}

// unrecognisedReason says why a file was skipped, err its error: its
// content is none of the formats gpuleak reads, gpuleak's own output, an
// archive, or a printout of memory figures gpuleak recognises but does
// not read (a profiler table, memory_allocated() prints: parse.ErrPrintout,
// whose message says what to record instead). A name that inputs carry (a .json trace or
// timeline, a .pickle snapshot) is pointed out: such a file is more
// likely an input in a layout gpuleak does not know than a bystander.
func unrecognisedReason(path string, err error) string {
	var pe *parse.Error
	if (errors.Is(err, parse.ErrOwnOutput) || errors.Is(err, parse.ErrContainer)) && errors.As(err, &pe) {
		// A report or baseline left beside the artifacts, or an archive
		// of some: say what it is, not that its layout may be an input's
		// gpuleak missed.
		return pe.Msg
	}
	if errors.As(err, &pe) && pe.Line > 0 && (strings.HasPrefix(pe.Msg, "part of nvidia-smi") || strings.HasPrefix(pe.Msg, "part of an nvidia-smi")) {
		// An excerpt of an nvidia-smi report that lacks what says which
		// GPU it is of (nvml.QTextExcerpt, nvml.XMLExcerpt): what analyze
		// says of it, at its line.
		return fmt.Sprintf("line %d: %s", pe.Line, pe.Msg)
	}
	if errors.Is(err, parse.ErrPrintout) && errors.As(err, &pe) {
		// A printout gpuleak recognises but does not read: what it is
		// and what to record instead, as analyze says it (its message
		// quotes the line that tells).
		return pe.Msg
	}
	why := "its content is no format gpuleak reads (formats are recognised by content, not by name; gpuleak analyze FILE lists them)"
	name := strings.ToLower(path)
	for _, ext := range []string{".json", ".json.gz", ".pickle", ".pkl"} {
		if strings.HasSuffix(name, ext) {
			return why + "; named like an input (" + ext + "): if it is a profiler trace, memory timeline, snapshot or memory_stats(), gpuleak did not recognise its layout"
		}
	}
	return why
}

func (f *folder) unreadable(g Group, path string, err error) {
	f.d.Summary.Unreadable++
	if len(f.d.Unreadable) < report.DailyMaxItems {
		// The entry names the file (Path): its error, which begins with
		// the file's name as every input error does, is kept without it,
		// so that the page does not say the path twice.
		msg := strings.TrimPrefix(err.Error(), path+": ")
		f.d.Unreadable = append(f.d.Unreadable, report.DailyInput{Host: g.Host, Job: g.Job, Path: path, Error: msg})
	}
}

// readInPart counts an input read with unreadable lines skipped and
// names it (the first DailyMaxItems).
func (f *folder) readInPart(in report.DailyInput) {
	f.d.Summary.ReadInPart++
	if len(f.d.ReadInPart) < report.DailyMaxItems {
		f.d.ReadInPart = append(f.d.ReadInPart, in)
	}
}

// toolError counts a group of compute-sanitizer error records and lists
// it: the first DailyMaxItems by input path and place in the input,
// whatever order the workers finish in.
func (f *folder) toolError(e report.DailyToolError) {
	f.d.Summary.ToolErrors += max(e.Count, 1)
	f.toolErrorGroups++
	f.d.ToolErrors = appendBounded(f.d.ToolErrors, e, report.DailyMaxItems, toolErrorLess)
}

// toolErrorLess orders tool errors by input path, then in the tool's
// order within an input (the first reported first), then by date (one
// path in daily reports of several days).
func toolErrorLess(a, b *report.DailyToolError) bool {
	switch {
	case a.Path != b.Path:
		return a.Path < b.Path
	case a.Index != b.Index:
		return a.Index < b.Index
	}
	return a.Date < b.Date
}

// inputWarnings counts an input whose reading or analysis warned and
// lists it: the first DailyMaxItems by path, whatever order the workers
// finish in.
func (f *folder) inputWarnings(w report.DailyInputWarnings) {
	f.d.Summary.InputsWithWarnings++
	f.d.InputWarnings = appendBounded(f.d.InputWarnings, w, report.DailyMaxItems, func(a, b *report.DailyInputWarnings) bool { return a.Path < b.Path })
}

func (f *folder) inWindow(us int64) bool {
	if !f.opt.From.IsZero() && us < f.opt.From.UnixMicro() {
		return false
	}
	if !f.opt.To.IsZero() && us >= f.opt.To.UnixMicro() {
		return false
	}
	return true
}

// inputTime is the latest time an input's content gives: a snapshot's
// trace end, an NVML log's last sample. A log whose times are not dates
// (ContentDated) gives none.
func inputTime(in report.Input) (int64, bool) {
	if !ContentDated(in) {
		return 0, false
	}
	var us int64
	ok := false
	pick := func(p *int64) {
		if p != nil && *p > 0 && (!ok || *p > us) {
			us, ok = *p, true
		}
	}
	pick(in.EndUs)
	for _, d := range in.Devices {
		pick(d.TraceEndUs)
	}
	return us, ok
}

// ContentDated reports whether an input's own times are dates. An NVML
// log without times (clock "row-order": dmon without -o, dcgmi dmon, DCGM
// scrapes or a CSV without timestamps) is placed from the Unix epoch
// unless --start gave its first time, and one with times of day only
// ("time-of-day") has its dates unknown, shown as 1970-01-01: neither
// says when it was taken, and neither do its findings' times; its file's
// modification time does.
func ContentDated(in report.Input) bool {
	switch in.Clock {
	case "time-of-day":
		return false
	case "row-order":
		return in.StartUs != nil && *in.StartUs > 0
	}
	return true
}

// findingTime is when a finding happened: an OOM's time, a trend's last
// sample, a leak's last kept allocation; else its input's time.
func findingTime(f *report.Finding, inputUs int64) int64 {
	switch {
	case f.OOMDetail != nil && f.TimeUs != nil && *f.TimeUs > 0:
		return *f.TimeUs
	case f.SeriesEndUs != nil && *f.SeriesEndUs > 0:
		return *f.SeriesEndUs
	case f.Growth != nil && f.Growth.LastKeptUs != nil && *f.Growth.LastKeptUs > 0:
		return *f.Growth.LastKeptUs
	}
	return inputUs
}

// worthListing: the findings the summary's worst list may hold.
func worthListing(f *report.Finding) bool {
	switch f.Kind {
	case report.KindOOM, report.KindLeak, report.KindFragmentation, report.KindNonPyTorch, report.KindPendingFree:
		return true
	case report.KindTrend:
		return f.Classification == "growing"
	}
	return false
}

// worst keeps the 10 most important findings: by kind (an OOM, a leak, a
// growing GPU or process, memory outside PyTorch, pending frees,
// fragmentation), then bytes, then path.
func (f *folder) worst(df report.DailyFinding) {
	w := append(f.d.Summary.Worst, df)
	sort.SliceStable(w, func(i, j int) bool {
		a, b := &w[i], &w[j]
		if worstRank(a.Kind) != worstRank(b.Kind) {
			return worstRank(a.Kind) < worstRank(b.Kind)
		}
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Message < b.Message
	})
	if len(w) > 10 {
		w = w[:10]
	}
	f.d.Summary.Worst = w
}

func worstRank(k report.Kind) int {
	for i, x := range []report.Kind{report.KindOOM, report.KindLeak, report.KindTrend, report.KindNonPyTorch, report.KindPendingFree, report.KindFragmentation} {
		if k == x {
			return i
		}
	}
	return 9
}

func (f *folder) leak(g Group, df report.DailyFinding) {
	f.d.Summary.Leaks++
	f.d.Summary.LeakBytes += df.Bytes
	k := siteKey(&df.Finding, g.Name())
	s := f.sites[k]
	if s == nil {
		s = &report.DailyLeakSite{Key: k, Site: df.Site, Stack: df.Stack, SiteUnknown: df.SiteUnknown, Jobs: []string{}, Days: []string{}, Curves: []report.DailyCurve{}}
		f.sites[k] = s
	}
	s.Findings++
	s.Bytes += df.Bytes
	s.Count += df.Count
	if gr := df.Growth; gr != nil && gr.BytesPerSecond != nil && *gr.BytesPerSecond > s.MaxBytesPerS {
		s.MaxBytesPerS = *gr.BytesPerSecond
	}
	// The message of its largest finding (the first path on a tie: the
	// page does not depend on which worker finished first).
	if old, ok := f.siteBy[k]; !ok || df.Bytes > old.bytes || df.Bytes == old.bytes && df.Path < old.path {
		f.siteBy[k] = sizedPath{df.Bytes, df.Path}
		s.Message = df.Message
	}
	if !f.siteJob[k] {
		f.siteJob[k] = true
		s.JobCount++
		s.Jobs = addBounded(s.Jobs, g.Name(), report.DailyMaxSiteJobs)
	}
	if df.Device != nil {
		s.Devices = addBounded(s.Devices, fmt.Sprintf("%s device %d", g.Name(), *df.Device), report.DailyMaxSiteJobs)
	}
	s.Days = addSorted(s.Days, df.Date)
	if gr := df.Growth; gr != nil && len(gr.LiveBytes) > 1 {
		// At most 8 curves a site: those of the first labels.
		s.Curves = append(s.Curves, report.DailyCurve{Label: g.Name() + ": " + baseName(df.Path), AtUs: gr.LiveAtUs, Bytes: gr.LiveBytes})
		sort.Slice(s.Curves, func(i, j int) bool { return s.Curves[i].Label < s.Curves[j].Label })
		if len(s.Curves) > 8 {
			s.Curves = s.Curves[:8]
		}
	}
}

// siteKey identifies a leak site across jobs and devices (the device
// index of one job says nothing about another's) by its stack and its
// site's full frame, line included, as analyze tells sites apart: two
// allocations in one function are two sites.
//
// A finding with no site (no stack at all, as a log holding only
// compute-sanitizer's LEAK SUMMARY gives, or a site unknown because the
// backtrace was cut before the program's frames) is keyed by its job
// (job, "host/job") as well: nothing in it shows that the leaks of two
// programs come from one place (xmrig/xmrig-nvidia#199's 10 allocations of
// 960 MiB and proteneer/timemachine#569's 14 of 7,536 bytes are no one
// site), while one job's logs of several days, a file a day, are the one
// program's and recur as one site.
func siteKey(f *report.Finding, job string) string {
	c := *f
	c.Device = nil
	k := report.SiteKey(&c)
	if f.Site.Line > 0 {
		k += fmt.Sprintf("|line %d", f.Site.Line)
	}
	if noSite(f) {
		k += "|no site|" + job
	}
	return k
}

// noSite reports whether a finding names no site: its site is unknown
// (SiteUnknown) or it has neither a stack nor a site frame.
func noSite(f *report.Finding) bool {
	return f.SiteUnknown != "" || len(f.Stack) == 0 && f.Site == (report.Frame{})
}

func (f *folder) oom(df report.DailyFinding) {
	f.d.Summary.OOMs++
	f.oomDays[[2]string{df.Date, causeOf(&df)}]++
	if len(f.d.OOMs) >= report.DailyMaxItems {
		f.moreOOMs++
	}
	f.d.OOMs = appendBounded(f.d.OOMs, df, report.DailyMaxItems, oomLess)
}

// GPUUUIDs maps the NVML index of each GPU of one group's logs to its UUID
// where a log gives both, so that a dmon log's "gpu 0" and a --query-gpu
// log's UUID name one GPU. Keys are "HOST|INDEX" (HOST the finding's host,
// "" when none); an index that names two UUIDs on one host is left out.
func GPUUUIDs(fs []report.Finding) map[string]string {
	m := map[string]string{}
	multi := map[string]bool{}
	for _, f := range fs {
		if f.Kind != report.KindTrend || f.GPU == nil || f.GPUUUID == "" {
			continue
		}
		k := f.Host + "|" + fmt.Sprint(*f.GPU)
		if u, ok := m[k]; ok && u != f.GPUUUID {
			multi[k] = true
		}
		m[k] = f.GPUUUID
	}
	for k := range multi {
		delete(m, k) // indices reused across machines: do not guess
	}
	return m
}

func (f *folder) trend(g Group, df report.DailyFinding, uuidOf map[string]string) {
	gpu := df.GPUUUID
	if gpu == "" && df.GPU != nil {
		gpu = uuidOf[df.Finding.Host+"|"+fmt.Sprint(*df.GPU)]
		if gpu == "" {
			gpu = fmt.Sprintf("gpu %d", *df.GPU)
		}
	}
	if gpu == "" {
		gpu = "gpu ?"
	}
	// A GPU with a UUID is that GPU wherever it is seen (the UUID is
	// globally unique: one GPU over a week of job directories); a bare
	// index is its host's, or without a host its job's.
	k := "uuid\x00" + gpu
	base, norm := k, ""
	if !isGPUUUID(gpu) {
		k = df.Host + "\x00" + gpu
		if df.Host == "" {
			k = "\x00" + g.Name() + "\x00" + gpu
		}
		// An index names a GPU of its host only: logs of that host whose
		// GPU at that index has another name (another model: a machine
		// rebuilt, or several machines under one host directory) are of
		// another GPU. Kept apart here; joined again in finish where the
		// names agree (mergeNamedGPUs).
		base, norm = k, normGPUName(df.GPUName)
		k += "\x00" + norm
	}
	if f.hostGPUs == nil {
		f.hostGPUs = map[string]map[string]bool{}
	}
	if f.hostGPUs[g.Host] == nil {
		f.hostGPUs[g.Host] = map[string]bool{k: true}
	} else {
		f.hostGPUs[g.Host][k] = true
	}
	acc := f.gpus[k]
	if acc == nil {
		acc = &gpuAcc{g: report.DailyGPU{Host: df.Host, Job: g.Job, GPU: gpu, Series: []report.DailyFinding{}, Curves: []report.DailyCurve{}}, low: map[string]int64{}, curves: map[string]curveCand{},
			base: base, norm: norm}
		if df.Host != "" {
			acc.g.Job = ""
		}
		f.gpus[k] = acc
	} else if acc.g.Host == "" && df.Host != "" {
		acc.g.Host, acc.g.Job = df.Host, "" // a later log names its host
	} else if acc.g.Host == "" && g.Job < acc.g.Job {
		acc.g.Job = g.Job // the first job by name, whatever order groups finish in
	}
	if n := strings.TrimSpace(df.GPUName); len(n) > len(acc.name) || len(n) == len(acc.name) && n < acc.name {
		acc.name = n
	}
	if report.TrendClassRank(df.Classification) < report.TrendClassRank(acc.g.Class) || acc.g.Class == "" {
		acc.g.Class = df.Classification
	}
	if df.PID == nil {
		low := lowest(&df.Finding)
		if old, ok := acc.low[df.Date]; !ok || low < old {
			acc.low[df.Date] = low
		}
	}
	acc.g.Series = appendBounded(acc.g.Series, df, maxSeries, seriesLess)
	if p := df.SeriesProfile; len(p) > 1 && df.SeriesStartUs != nil && df.SeriesEndUs != nil {
		label := "whole GPU"
		if df.PID != nil {
			label = fmt.Sprintf("pid %d", *df.PID)
			if df.Process != "" {
				label += " " + df.Process
			}
		}
		// The same series in several logs of the job (pmon, pynvml,
		// --query-compute-apps) is charted once: from the log with the
		// most samples.
		key := "gpu"
		if df.PID != nil {
			key = fmt.Sprintf("pid %d", *df.PID)
		}
		old, ok := acc.curves[key]
		if (ok && df.Samples > old.samples) || (!ok && len(acc.curves) < maxCurveCands) {
			peak := df.Bytes
			if df.PeakBytes != nil {
				peak = *df.PeakBytes
			}
			acc.curves[key] = curveCand{c: report.DailyCurve{Label: label + " (" + baseName(df.Path) + ")",
				AtUs: spread(*df.SeriesStartUs, *df.SeriesEndUs, len(p)), Bytes: p}, gpu: df.PID == nil, samples: df.Samples, peak: peak}
		}
	}
}

// normGPUName is a GPU's name as compared across logs: lower case,
// without "NVIDIA " (drivers before R470 leave it out: "A100-SXM4-40GB"),
// blanks collapsed; a name nvidia-smi's table cut ("Tesla V100-PCIE...")
// keeps its cut as a final "…" (gpuNamesAgree).
func normGPUName(name string) string {
	n := strings.ToLower(strings.Join(strings.Fields(name), " "))
	cut := false
	for {
		t := strings.TrimSuffix(strings.TrimSuffix(n, "..."), "…")
		if t == n {
			break
		}
		n, cut = strings.TrimSpace(t), true
	}
	n = strings.TrimPrefix(n, "nvidia ")
	if cut {
		n += "…"
	}
	return n
}

// gpuNamesAgree reports whether two normGPUName names may be one GPU's:
// the same, or one cut by nvidia-smi's table and the other starting with
// what is left of it.
func gpuNamesAgree(a, b string) bool {
	if a == b {
		return true
	}
	if s, ok := strings.CutSuffix(a, "…"); ok && strings.HasPrefix(strings.TrimSuffix(b, "…"), s) {
		return true
	}
	if s, ok := strings.CutSuffix(b, "…"); ok && strings.HasPrefix(strings.TrimSuffix(a, "…"), s) {
		return true
	}
	return false
}

// mergeNamedGPUs joins the GPUs of one host and index (one base) that
// trend kept apart by name where their names agree (gpuNamesAgree), and
// those whose logs give no name into the one named GPU of their base
// when there is one. Where GPUs of different names remain under one
// index, each is labelled with its name and a warning says their series
// are not joined: an index is a GPU of one machine, and "gpu 0" of a
// GTX TITAN's log and of an H100's is not one GPU whose lowest memory
// moved between them. In key order, so that the result does not depend
// on the order groups finish in.
func (f *folder) mergeNamedGPUs() {
	byBase := map[string][]string{}
	for k, acc := range f.gpus {
		if acc.base != k { // by index, not UUID
			byBase[acc.base] = append(byBase[acc.base], k)
		}
	}
	bases := make([]string, 0, len(byBase))
	for b, ks := range byBase {
		if len(ks) > 1 {
			bases = append(bases, b)
		}
	}
	sort.Strings(bases)
	for _, b := range bases {
		ks := byBase[b]
		sort.Strings(ks) // the unnamed one ("...\x00") first
		var named, unnamed []string
		for _, k := range ks {
			if f.gpus[k].norm == "" {
				unnamed = append(unnamed, k)
				continue
			}
			joined := false
			for _, into := range named {
				if gpuNamesAgree(f.gpus[into].norm, f.gpus[k].norm) {
					f.absorbGPU(into, k)
					joined = true
					break
				}
			}
			if !joined {
				named = append(named, k)
			}
		}
		if len(named) == 1 {
			for _, k := range unnamed {
				f.absorbGPU(named[0], k)
			}
			continue
		}
		if len(named) < 2 {
			continue
		}
		var names []string
		for _, k := range named {
			acc := f.gpus[k]
			names = append(names, acc.name)
			acc.g.GPU += " (" + acc.name + ")"
		}
		for _, k := range unnamed {
			f.gpus[k].g.GPU += " (no log names it)"
		}
		first := f.gpus[named[0]]
		where := first.g.Host
		if where == "" {
			where = "job " + first.g.Job
		}
		f.d.Warnings = append(f.d.Warnings, fmt.Sprintf("%s: %s is named %s in different logs: GPUs of different models under one index (a machine rebuilt, or several machines' logs under one host), kept apart: their series, lowest used memory and its change per day are not joined",
			where, strings.TrimSuffix(b[strings.LastIndexByte(b, 0)+1:], "\x00"), quoteJoin(names)))
	}
}

// quoteJoin quotes names and joins them: "A", "B" and "C".
func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// absorbGPU joins the GPU under key from into the one under key into:
// its series, lowest memory per day, curves, class, host and job.
func (f *folder) absorbGPU(into, from string) {
	a, b := f.gpus[into], f.gpus[from]
	if report.TrendClassRank(b.g.Class) < report.TrendClassRank(a.g.Class) || a.g.Class == "" {
		a.g.Class = b.g.Class
	}
	for day, low := range b.low {
		if old, ok := a.low[day]; !ok || low < old {
			a.low[day] = low
		}
	}
	for _, s := range b.g.Series {
		a.g.Series = appendBounded(a.g.Series, s, maxSeries, seriesLess)
	}
	for key, c := range b.curves {
		if old, ok := a.curves[key]; (ok && c.samples > old.samples) || (!ok && len(a.curves) < maxCurveCands) {
			a.curves[key] = c
		}
	}
	if a.g.Host == "" && b.g.Host != "" {
		a.g.Host, a.g.Job = b.g.Host, ""
	} else if a.g.Host == "" && b.g.Job < a.g.Job {
		a.g.Job = b.g.Job
	}
	if len(b.name) > len(a.name) {
		a.name = b.name
	}
	delete(f.gpus, from)
	for _, keys := range f.hostGPUs {
		if keys[from] {
			delete(keys, from)
			keys[into] = true
		}
	}
}

// isGPUUUID: a GPU's name is its NVML UUID (GPU-…, MIG-…), not a bare
// index ("gpu 0", "gpu ?").
func isGPUUUID(gpu string) bool { return gpu != "" && !strings.HasPrefix(gpu, "gpu ") }

// lowest is the least used memory a GPU's series shows: its baseline
// between runs when it has one, else the least of its profile.
func lowest(f *report.Finding) int64 {
	if f.BaselineBytes != nil {
		return *f.BaselineBytes
	}
	low := f.Bytes
	for _, b := range f.SeriesProfile {
		low = min(low, b)
	}
	return low
}

// spread places n points evenly from start to end: the middles of the
// profile's n equal parts.
func spread(start, end int64, n int) []int64 {
	out := make([]int64, n)
	step := float64(end-start) / float64(n)
	for i := range out {
		out[i] = start + int64(step*(float64(i)+0.5))
	}
	return out
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

func addSorted(xs []string, x string) []string {
	i := sort.SearchStrings(xs, x)
	if i < len(xs) && xs[i] == x {
		return xs
	}
	xs = append(xs, "")
	copy(xs[i+1:], xs[i:])
	xs[i] = x
	return xs
}

// appendBounded keeps the n items that come first by less (a total
// order, so that the result does not depend on the order of arrival).
func appendBounded[T any](xs []T, x T, n int, less func(a, b *T) bool) []T {
	i := sort.Search(len(xs), func(i int) bool { return less(&x, &xs[i]) })
	if i >= n {
		return xs
	}
	xs = slices.Insert(xs, i, x)
	if len(xs) > n {
		xs = xs[:n]
	}
	return xs
}

// maxSeries bounds the series listed for one GPU.
const maxSeries = 32

// seriesLess orders a GPU's series: the GPU's own first, then by class
// (growing first), bytes, pid and input.
func seriesLess(a, b *report.DailyFinding) bool {
	if (a.PID == nil) != (b.PID == nil) {
		return a.PID == nil
	}
	if report.TrendClassRank(a.Classification) != report.TrendClassRank(b.Classification) {
		return report.TrendClassRank(a.Classification) < report.TrendClassRank(b.Classification)
	}
	if a.Bytes != b.Bytes {
		return a.Bytes > b.Bytes
	}
	if a.PID != nil && *a.PID != *b.PID {
		return *a.PID < *b.PID
	}
	return a.Path < b.Path
}

// finish sorts the sections and fills the summary.
func (f *folder) finish() *report.Daily {
	d := f.d
	for day := range f.days {
		d.Days = append(d.Days, day)
	}
	sort.Strings(d.Days)
	d.Summary.Hosts = len(f.hosts)
	d.Summary.LeakSites = len(f.sites)
	for _, s := range f.sites {
		s.Persisted, s.CameBack = persistence(s.Days, d.Days)
		sort.Slice(s.Curves, func(i, j int) bool { return s.Curves[i].Label < s.Curves[j].Label })
		d.LeakSites = append(d.LeakSites, *s)
	}
	sort.Slice(d.LeakSites, func(i, j int) bool {
		a, b := &d.LeakSites[i], &d.LeakSites[j]
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Key < b.Key
	})
	if len(d.LeakSites) > report.DailyMaxItems {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d leak sites; the %d holding the most are listed", len(d.LeakSites), report.DailyMaxItems))
		d.LeakSites = d.LeakSites[:report.DailyMaxItems]
	}
	if f.moreOOMs > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d OOMs; the first %d in time are listed (ooms_by_day counts all)", d.Summary.OOMs, report.DailyMaxItems))
	}
	if n := d.Summary.UndescribedOOMs; len(d.UndescribedOOMs) >= report.DailyMaxItems {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d OOMs counted by allocators without a message; the first %d jobs' are listed", n, report.DailyMaxItems))
	}
	if len(f.outside) > 0 {
		kinds := make([]string, 0, len(f.outside))
		for k, n := range f.outside {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
		sort.Strings(kinds)
		d.Warnings = append(d.Warnings, fmt.Sprintf("findings of jobs read in the window are dated outside it and not shown: %s (jobs %s); an OOM message is dated by its snapshot's trace when one is beside it, and its file's modification time otherwise: widen --since, --from or --to to see them",
			strings.Join(kinds, ", "), strings.Join(f.outsideJobs, ", ")))
	}
	for k, n := range f.oomDays {
		d.OOMsByDay = append(d.OOMsByDay, report.DailyCount{Date: k[0], Key: k[1], Count: n})
	}
	sort.Slice(d.OOMsByDay, func(i, j int) bool {
		a, b := d.OOMsByDay[i], d.OOMsByDay[j]
		if a.Date != b.Date {
			return a.Date < b.Date
		}
		return a.Key < b.Key
	})
	f.mergeNamedGPUs()
	for _, acc := range f.gpus {
		g := acc.g
		g.BaselineCreepBytesPerDay = creep(acc.low)
		g.Curves = chooseCurves(acc.curves, 8)
		d.GPUs = append(d.GPUs, g)
	}
	d.Summary.GPUs = len(d.GPUs)
	f.countOtherDevices()
	sort.Slice(d.GPUs, func(i, j int) bool {
		a, b := &d.GPUs[i], &d.GPUs[j]
		if report.TrendClassRank(a.Class) != report.TrendClassRank(b.Class) {
			return report.TrendClassRank(a.Class) < report.TrendClassRank(b.Class)
		}
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		if a.Job != b.Job {
			return a.Job < b.Job
		}
		return a.GPU < b.GPU
	})
	if len(d.GPUs) > report.DailyMaxItems {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d GPUs sampled by NVML; the %d worst are listed", len(d.GPUs), report.DailyMaxItems))
		d.GPUs = d.GPUs[:report.DailyMaxItems]
	}
	sort.Slice(d.Jobs, func(i, j int) bool {
		if d.Jobs[i].Host != d.Jobs[j].Host {
			return d.Jobs[i].Host < d.Jobs[j].Host
		}
		return d.Jobs[i].Job < d.Jobs[j].Job
	})
	sort.Slice(d.Unreadable, func(i, j int) bool { return d.Unreadable[i].Path < d.Unreadable[j].Path })
	sort.Slice(d.ReadInPart, func(i, j int) bool { return d.ReadInPart[i].Path < d.ReadInPart[j].Path })
	if f.merged > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d earlier daily reports merged: their leak sites, OOMs, GPU series, fragmentation, compute-sanitizer errors and inputs' warnings are counted; their charts' data and findings outside the leak, OOM, trend and fragmentation sections are not", f.merged))
	}
	if f.dated > 0 {
		// Name the formats dated so: OOM messages, memory_stats and
		// sanitizer reports, but also NVML logs without dates (dcgmi
		// dmon, a CSV without a timestamp column, dmon -o T).
		formats := make([]string, 0, len(f.datedAs))
		for k := range f.datedAs {
			formats = append(formats, k)
		}
		sort.Strings(formats)
		text := "%d inputs carry no dates of their own (%s): dated by their file's modification time"
		if f.dated == 1 {
			text = "%d input carries no dates of its own (%s): dated by its file's modification time"
		}
		d.Warnings = append(d.Warnings, fmt.Sprintf(text, f.dated, strings.Join(formats, ", ")))
	}
	if d.Summary.Unreadable > len(d.Unreadable) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d inputs could not be read; the first %d are listed", d.Summary.Unreadable, len(d.Unreadable)))
	}
	if f.toolErrorGroups > len(d.ToolErrors) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d compute-sanitizer error records in %d groups; the first %d groups, by input path, are listed", d.Summary.ToolErrors, f.toolErrorGroups, len(d.ToolErrors)))
	}
	if d.Summary.InputsWithWarnings > len(d.InputWarnings) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d inputs have warnings; the first %d by path are listed", d.Summary.InputsWithWarnings, len(d.InputWarnings)))
	}
	if d.Summary.Skipped > len(d.Skipped) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d files were skipped; the first %d by path are listed", d.Summary.Skipped, len(d.Skipped)))
	}
	return d
}

// causeOf is an OOM's causes joined with "+" ("unknown" without any).
func causeOf(o *report.DailyFinding) string {
	if o.OOMDetail != nil && len(o.Cause) > 0 {
		return strings.Join(o.Cause, "+")
	}
	return "unknown"
}

// oomLess orders OOMs by time, then input and message.
func oomLess(a, b *report.DailyFinding) bool {
	if ta, tb := oomTime(a), oomTime(b); ta != tb {
		return ta < tb
	}
	if a.Path != b.Path {
		return a.Path < b.Path
	}
	return a.Message < b.Message
}

func oomTime(f *report.DailyFinding) int64 {
	if f.OOMDetail != nil && f.TimeUs != nil {
		return *f.TimeUs
	}
	return 0
}

// persistence: a site persisted when it leaked on every report day from
// its first; it came back when its days have a gap.
func persistence(siteDays, days []string) (persisted, cameBack bool) {
	if len(siteDays) == 0 || len(days) < 2 {
		return false, false
	}
	first := sort.SearchStrings(days, siteDays[0])
	rest := days[first:]
	if len(siteDays) == len(rest) && len(rest) >= 2 {
		return true, false
	}
	// a gap: a report day between its first and last that it missed
	last := sort.SearchStrings(days, siteDays[len(siteDays)-1])
	return false, last-first+1 > len(siteDays)
}

// creep is the least-squares slope of a GPU's lowest used memory per day
// (bytes per day); nil with fewer than two days.
func creep(low map[string]int64) *float64 {
	if len(low) < 2 {
		return nil
	}
	var xs, ys []float64
	for day, b := range low {
		t, err := time.Parse(time.DateOnly, day)
		if err != nil {
			continue
		}
		xs = append(xs, float64(t.Unix())/86400)
		ys = append(ys, float64(b))
	}
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return nil
	}
	s := (n*sxy - sx*sy) / den
	return &s
}

// chooseCurves picks at most n curves for a GPU's chart: the whole GPU
// first, then processes by peak, then by label.
func chooseCurves(m map[string]curveCand, n int) []report.DailyCurve {
	cs := make([]curveCand, 0, len(m))
	for _, c := range m {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := &cs[i], &cs[j]
		if a.gpu != b.gpu {
			return a.gpu
		}
		if a.peak != b.peak {
			return a.peak > b.peak
		}
		return a.c.Label < b.c.Label
	})
	out := []report.DailyCurve{}
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].c)
	}
	return out
}

// InputDate is the UTC date of an input: of its own latest timestamp,
// else of modUs (its file's modification time, µs since the epoch).
func InputDate(in report.Input, modUs int64) string {
	if us, ok := inputTime(in); ok {
		return date(us)
	}
	return date(modUs)
}

// FindingTime is when a finding happened by its own members (an OOM's
// time, a trend's last sample, a leak's last kept allocation); ok is false
// when it has none.
func FindingTime(f *report.Finding) (us int64, ok bool) {
	us = findingTime(f, 0)
	return us, us > 0
}

// Date is the UTC date (YYYY-MM-DD) of a time in µs since the epoch.
func Date(us int64) string { return date(us) }

// addBounded adds x to the sorted xs, keeping the n first.
func addBounded(xs []string, x string, n int) []string {
	xs = addSorted(xs, x)
	if len(xs) > n {
		xs = xs[:n]
	}
	return xs
}

// appendJob keeps the DailyMaxItems jobs with the most leaks, OOMs and
// growing series, then the most findings, then by name.
func appendJob(js []report.DailyJob, j report.DailyJob) []report.DailyJob {
	score := func(j *report.DailyJob) int { return j.Leaks + j.OOMs + j.UndescribedOOMs + j.Growing + j.ToolErrors }
	less := func(a, b *report.DailyJob) bool {
		if score(a) != score(b) {
			return score(a) > score(b)
		}
		if a.Findings != b.Findings {
			return a.Findings > b.Findings
		}
		return jobName(a.Host, a.Job) < jobName(b.Host, b.Job)
	}
	i := sort.Search(len(js), func(i int) bool { return less(&j, &js[i]) })
	if i >= report.DailyMaxItems {
		return js
	}
	js = append(js, report.DailyJob{})
	copy(js[i+1:], js[i:])
	js[i] = j
	if len(js) > report.DailyMaxItems {
		js = js[:report.DailyMaxItems]
	}
	return js
}

// namedDevices notes the CUDA devices that a job's inputs read in the
// window (inputUs) name other than through NVML: a snapshot's devices,
// and the device of a finding from any input but an NVML log (an OOM
// message's "GPU 0", a profiler trace's, a sanitizer report's).
func (f *folder) namedDevices(g Group, r *report.Report, inputUs map[string]int64) {
	format := map[string]string{}
	add := func(dev int, fmtName string) {
		if f.devices == nil {
			f.devices, f.deviceKinds = map[[2]string]map[int]bool{}, map[string]bool{}
		}
		k := [2]string{g.Host, g.Job}
		if f.devices[k] == nil {
			f.devices[k] = map[int]bool{}
		}
		f.devices[k][dev] = true
		f.deviceKinds[deviceInputKind(fmtName)] = true
	}
	for _, in := range r.Inputs {
		if _, ok := inputUs[in.Path]; !ok || in.Error != "" {
			continue
		}
		format[in.Path] = in.Format
		for _, d := range in.Devices {
			add(d.Device, in.Format)
		}
	}
	for _, fd := range r.Findings {
		fmtName, ok := format[fd.Path]
		if !ok || fd.Kind == report.KindTrend || fd.Device == nil || fd.DeviceType != "" {
			continue
		}
		add(*fd.Device, fmtName)
	}
}

// deviceInputKind is the words for the kind of input of format fmtName
// (parse.Format) that names a CUDA device.
func deviceInputKind(fmtName string) string {
	switch {
	case strings.Contains(fmtName, "snapshot"):
		return "snapshots"
	case strings.Contains(fmtName, "sanitizer"):
		return "compute-sanitizer reports"
	case strings.Contains(fmtName, "kineto"), strings.Contains(fmtName, "timeline"), strings.Contains(fmtName, "profiler"):
		return "profiler traces"
	case strings.Contains(fmtName, "summary"), strings.Contains(fmtName, "stats"):
		return "memory summaries"
	}
	return "OOM messages"
}

// countOtherDevices counts in Summary.OtherDevices the GPUs that inputs
// other than NVML logs name beyond those NVML logs sample, per host (the
// jobs whose host is not known as one host: they may all have run on one
// workstation): the most distinct CUDA devices one job there names, less
// the GPUs NVML logs there sample. A CUDA device index counts from the process's
// CUDA_VISIBLE_DEVICES, not NVML's index, so which GPU it names is not
// known (device 0 of two jobs of a host may be two GPUs, or one): a host
// has at least as many GPUs as any one job names or NVML samples, and
// only that is counted.
func (f *folder) countOtherDevices() {
	most := map[string]int{} // by host
	for k, devs := range f.devices {
		most[k[0]] = max(most[k[0]], len(devs))
	}
	for host, n := range most {
		f.d.Summary.OtherDevices += max(n-len(f.hostGPUs[host]), 0)
	}
	if f.d.Summary.OtherDevices > 0 {
		for k := range f.deviceKinds {
			f.d.Summary.OtherDeviceKinds = append(f.d.Summary.OtherDeviceKinds, k)
		}
		sort.Strings(f.d.Summary.OtherDeviceKinds)
	}
}
