package trend

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/dustin/go-humanize"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/parse/nvml"
)

// Class classifies how a memory series moves. The string values
// appear in reports and are stable.
type Class string

// Trend classes.
const (
	// Growing: still rising through the last part of the series, in many
	// steps or smoothly, or rising steadily from its onset to the last
	// sample however small against the level, or a sawtooth whose floor
	// keeps rising, or runs that each grow until the GPU is full and then
	// fall to near nothing (a crash loop: SeriesTrend.OOMExits): a leak
	// suspect.
	Growing Class = "growing"
	// Sawtooth: memory rises and is given back, again and again: allocation
	// churn, normal (runs that fill the GPU and fall to nothing are not).
	Sawtooth Class = "sawtooth"
	// Flat: no change beyond the noise (within 16 MiB, or 2% of the
	// level) and no steady growth.
	Flat Class = "flat"
	// Step: a one-time change (up, or down), then flat: a model or cache
	// loaded, not a leak. A step up that never comes back is not churn.
	Step Class = "step"
	// Undetermined: too few samples for any trend to be judged (one, or
	// all at one time).
	Undetermined Class = "undetermined"
)

// Options tune the trend analysis. The zero value is usable.
type Options struct {
	// MinSamples is the fewest samples a trend needs for a time to OOM
	// (default 8).
	MinSamples int
	// MinR2 is the least R² of the trend's least-squares line for a time
	// to OOM (default 0.5).
	MinR2 float64
	// MaxExtrapolation: a time to OOM is given only when it is at most this
	// many times the trend's window (default 20).
	MaxExtrapolation float64
	// GPUMemoryBytes is the total memory of GPUs whose logs do not give it
	// (dmon, pmon, --query-compute-apps); 0 leaves it unknown.
	GPUMemoryBytes int64
}

// Result is the outcome of a trend analysis.
type Result struct {
	// Series in input order; per input by GPU, the GPU's own series
	// before its processes', processes by pid.
	Series   []SeriesTrend
	Warnings []string
	// InputWarnings are warnings about one input's samples, by its name
	// (a sample whose used memory exceeds its GPU's total).
	InputWarnings map[string][]string
	// AboveTotal counts, by input, the samples left out of their series
	// because their used memory exceeded their GPU's total memory (the
	// row's, or Options.GPUMemoryBytes): damaged or mis-parsed rows.
	AboveTotal map[string]int
}

// SeriesTrend is the trend of one GPU's used memory (PID unset) or one
// process's. Sizes are bytes, times µs since the Unix epoch, rates bytes
// per second.
type SeriesTrend struct {
	Input, Source string // the input's path and format (parse.Format)
	Host          string
	GPU           int32
	HasGPU        bool // GPU is the NVML index; false when no log of the GPU names its index
	UUID, GPUName string
	PID           int64
	HasPID        bool // false: the whole GPU
	Process       string
	// Graphics: the process was listed as a graphics process alone (type
	// G in nvidia-smi's table), which --query-compute-apps never lists.
	Graphics bool
	// Pod, Namespace, Container: DCGM exporter's Kubernetes labels when
	// one pod held the GPU over the whole series; "" when none, or when
	// the labels changed (Pods then says who held it when).
	Pod       string
	Namespace string
	Container string
	// Pods are the pods DCGM exporter's labels said held the GPU, each
	// with the times of its first and last sample, in the order they
	// began (a pod back after another begins a new span); nil when the
	// samples name none. The GPU's memory is one series whoever holds
	// it: what one pod leaves behind is in the next one's samples.
	Pods []PodSpan
	// PodsLeftOut counts the spans past maxPodSpans not in Pods.
	PodsLeftOut int
	// StepsAtPodChanges: the series grew only where the pod holding the
	// GPU changed, each pod's samples flat: classed a step (ChangePoints
	// at those changes), since a new job's own memory and memory the one
	// before left behind cannot be told apart from the GPU's samples.
	StepsAtPodChanges bool
	Convention        string // nvml.Convention of the series' last sample

	Samples int
	// AboveTotal counts the samples left out of the series because their
	// used memory exceeded their GPU's total (not in Samples).
	AboveTotal                                 int
	StartUs, EndUs                             int64
	FirstBytes, LastBytes, MinBytes, PeakBytes int64
	PeakUs                                     int64
	// CapacityBytes is the most the GPU's used memory can reach (total less
	// the driver's reservation), 0 when unknown.
	CapacityBytes int64

	Class Class
	// The trend is fitted over [WindowStartUs, WindowEndUs]: the whole
	// series, or, for a growing series, what follows its last abrupt
	// large step or the onset of its growth. With RisingFloor it is fitted to the level a sawtooth
	// falls back to each cycle (WindowSamples counts those).
	WindowStartUs, WindowEndUs int64
	WindowSamples              int
	RisingFloor                bool
	// WarmUpEndUs, for a growing series: the window starts after a
	// gradual warm-up at the start of the series (caches filling, cuDNN
	// autotuning), which rose from FirstBytes to WarmUpToBytes by this
	// time, faster than the trend after it; not counted in the rate. 0
	// when no warm-up was seen.
	WarmUpEndUs, WarmUpToBytes int64
	// EndJump, for a growing series: an abrupt step up after its window,
	// too near the series' end for a trend after it (fewer than 8 points,
	// or less than a fifth of the series' time, follow it), which the
	// trend is fitted without: the samples before it grow on their own.
	// Its FromBytes and ToBytes are the samples either side of it. The
	// time to OOM is measured from the level after it. nil otherwise.
	EndJump *ChangePoint
	// EndJumpSamples: the samples from EndJump's EndUs to the series' end.
	EndJumpSamples int
	// Slope is the Theil–Sen slope; SlopeLow and SlopeHigh its 95%
	// interval (Sen). OLSSlope and R2: the least-squares line beside it.
	Slope, SlopeLow, SlopeHigh float64
	OLSSlope, R2               float64
	// Noise is a robust estimate of the sample-to-sample noise.
	Noise float64
	// SetAside counts the samples left out of the fit as one-sample
	// glitches: each far from both its neighbours (8σ of Noise and 16 MiB
	// at least), which agree with each other, and not the first or last
	// sample, nor a GPU's sample within a tenth of its capacity (the GPU
	// full: an out-of-memory crash's mark); the fit, the class and the
	// runs take the mean of the neighbours in their place. SetAsideUs
	// holds the times of the first 8 of them. Samples, FirstBytes, LastBytes, MinBytes and PeakBytes
	// still count them: they were read.
	SetAside   int
	SetAsideUs []int64
	// FullSamples counts the GPU's samples within a tenth of its capacity
	// (oomPeakShare) that stand alone between two samples that agree with
	// each other, far below it (as a glitch set aside, but kept for being
	// at the capacity: setAsideGlitchesBut). One such sample is what a
	// process leaves that filled the GPU and died of out-of-memory within
	// one sampling interval, or a misreading at the capacity: one sample
	// cannot tell. They stay in the fit, the class and the runs; the
	// finding names them. FullSampleAt holds the first 8 (time and used
	// bytes as read). 0 for a process, a GPU whose capacity is not known,
	// or where more than 1 sample in 10 is such (the series' own pattern).
	FullSamples  int
	FullSampleAt []Sample
	// GrowingPIDs, for a GPU series: the processes logged on it (by
	// --query-compute-apps, pmon, gpustat's or pynvml's process lists)
	// whose own series is growing, in PID order; nil when none is, or
	// when no process of the GPU was logged.
	GrowingPIDs []int64
	// CyclePeakBytes, for a growing series with RisingFloor: the highest
	// sample of its last two cycles, the level its time to OOM is
	// measured from (the peaks reach the capacity before the floor); 0
	// otherwise. The fit's points may be bin medians (long series).
	CyclePeakBytes int64
	// ChangePoints are the significant level shifts, in time order.
	ChangePoints []ChangePoint

	// TimeToOOM is when the GPU runs out at this rate, nil when not
	// credible; NoOOMReason then says why.
	TimeToOOM   *OOMEstimate
	NoOOMReason string

	// HeldToEnd: a process still holding memory in the last sample of the
	// log (of its own input, or of another log of its GPU that covers it).
	HeldToEnd bool
	LogEndUs  int64
	// EndUnknown: HeldToEnd, but the log (--query-compute-apps alone) cannot
	// tell a process that held its memory to the end from one that exited
	// when the log stopped.
	EndUnknown bool
	// StoppedBeforeEnd, for a GPU series: its samples stop before the end
	// of its log (LogEndUs) by more than one and a half sampling steps.
	// Its later rows carry no memory figure (nvidia-smi's [GPU is lost]
	// after an Xid 79, [Unknown Error]), or it left the log (a GPU
	// replaced: another UUID at its index; a host whose logging failed).
	// Its last sample is not the GPU's memory at the end of the log, and
	// it has no time to OOM.
	StoppedBeforeEnd bool
	// ReplacedBy, for a GPU series that StoppedBeforeEnd: the UUID of the
	// GPU its log shows at its host and index next, after its last sample
	// (the GPU replaced: an RMA, a node rebuilt), and ReplacedAtUs that
	// GPU's first sample (µs since the Unix epoch); "" and 0 when its log
	// shows none.
	ReplacedBy   string
	ReplacedAtUs int64

	// Unattributed is GPU memory no listed process accounts for, when
	// processes of this GPU are logged over the same time (GPU series).
	Unattributed *Unattributed

	// Runs are the series' stretches between returns to its baseline
	// (BaselineBytes, its least value), when memory came back to it at
	// least once: a process that started and exited, a job that freed what
	// it built up; nil otherwise. When one of them grew until it ended, or
	// the last one still grows, Class, the window and the slopes are that
	// run's, ReleasedUs is when it came back to the baseline (0: it did
	// not) and RunPeakBytes its peak.
	Runs          []Run
	BaselineBytes int64
	ReleasedUs    int64
	RunPeakBytes  int64
	// OOMExits counts the runs that grew until the GPU was full and then
	// fell to near nothing (Run.OOMExit), when they are two or more and
	// at least two thirds of the runs that ended: a leak that runs the
	// GPU out of memory and is restarted (a crash loop). The series is
	// then growing, with the fit of its last growing run, however many
	// runs repeat; 0 otherwise.
	OOMExits int

	// TailSlope: for a step, the Theil–Sen slope (bytes per second) of
	// the samples after its last change when they still rise (the 95%
	// interval excludes zero and the rise is at least 8 MiB); 0 when they
	// are flat.
	TailSlope float64
	// StepTailUs, for a step up in two or more changes up: how long the
	// samples after the last change span (µs), when that is no longer
	// than the longest time between two of its changes (StepSpacingUs):
	// the log stops before the next step would be due, so it cannot show
	// that the steps stopped. 0 otherwise.
	StepTailUs, StepSpacingUs int64
	// StepAtEnd: for a step, its last change reaches the series' last
	// samples (fewer than 3 follow it), so the log shows neither that
	// memory stayed at the new level nor that it kept changing.
	StepAtEnd bool

	// Profile is the used memory over the series in up to 48 equal parts
	// of its time (the highest sample of each), for sparklines.
	Profile []int64
}

// ChangePoint is a shift of level between StartUs (the last sample at the
// old level) and EndUs (the first at the new one); consecutive shifts of
// one sign a few samples apart are one change.
type ChangePoint struct {
	StartUs, EndUs     int64
	FromBytes, ToBytes int64
	// Transient: this change and the one next to it (after it, for the
	// first of the two; before it, for the second) are a spike or a dip:
	// a shift and its opposite with at most 3 samples between them
	// (stepMinAfter; a bin of samples where the series was binned), memory
	// landing within a significant rise of where it began (an eval batch,
	// a checkpoint's staging buffer). Neither is a step; the fall of a
	// spike is still memory given back.
	Transient bool
}

// Steps is the changes of cs that are not Transient, in time order.
func Steps(cs []ChangePoint) []ChangePoint {
	var out []ChangePoint
	for _, c := range cs {
		if !c.Transient {
			out = append(out, c)
		}
	}
	return out
}

// OOMEstimate is a time to out-of-memory: Seconds after the end of the
// series, within [LowSeconds, HighSeconds] from the slope's 95% interval
// and the uncertainty of the level the trend ends at.
type OOMEstimate struct {
	Seconds, LowSeconds, HighSeconds float64
	// HeadroomBytes: what was left at the end of the series.
	HeadroomBytes int64
	// GPUSlope, for a process on a GPU that other processes grow on too:
	// the GPU's growth (bytes per second) the estimate runs out at, not
	// the process's own: its GPU series' Theil–Sen slope (GPULogged), or
	// without a GPU log of the time the sum of the slopes of the GPU's
	// processes that grow to the end; Growers counts those (this one
	// included: 1 where the GPU's log gave the rate and no other logged
	// process is classed growing, the rest of the GPU's growth then being
	// memory no logged process is seen to gain). 0 when the process's own
	// slope was used.
	GPUSlope  float64
	GPULogged bool
	Growers   int
}

// Unattributed is GPU memory used by no listed process: the GPU's used
// memory less the sum of its processes', over the GPU's samples taken
// while processes were logged and memory was in use: the median, and the
// median of the last five. (Samples of a GPU and its processes are not taken at one instant,
// so single differences during fast changes mean little.)
type Unattributed struct {
	MedianBytes, EndBytes int64
	Samples               int
	// UnknownPIDs are processes of the GPU listed in those samples with
	// their memory unknown (nvidia-smi cut it or showed N/A; a
	// placeholder or null in a CSV or JSON log): they may hold what no
	// process accounts for. Their memory is in no sum: unknown is not 0.
	// At most maxUnknownPIDs, ascending.
	UnknownPIDs []int64
	// ProcessesOverBytes: where the processes' memory added up to more
	// than the GPU's used memory (the median difference below zero: logs
	// sampled at other instants, or counting what the other does not),
	// by how much (the median); MedianBytes and EndBytes are then 0, not
	// negative: no memory is unattributed, and the logs disagree.
	ProcessesOverBytes int64
	// NoneListed: no process of the GPU was listed in those samples, with
	// its memory or without (nvidia-smi outputs that list none for it: an
	// empty Processes box, -q's "Processes : None"): what is unattributed
	// is all the GPU's used memory.
	NoneListed bool
}

// unknownProc is a process row with no memory (nvml's used null), on
// its GPU's index (hasGPU) or UUID.
type unknownProc struct {
	input, host, uuid string
	gpu               int32
	hasGPU            bool
	pid, tUs          int64
}

// maxUnknownProcs bounds the process rows with unknown memory kept (the
// first ones); maxUnknownPIDs, the pids an Unattributed names.
const (
	maxUnknownProcs = 4096
	maxUnknownPIDs  = 8
)

// Analyzer builds the trends of NVML sample logs: feed it every
// record batch of the samples tables (nvml.Schema) with Add, declare
// each input's time span with Input, then call Finalize once. Series of
// one GPU in several inputs are linked by GPU UUID, or by host and index
// when they overlap in time, so that a --query-compute-apps log's
// processes find their GPU's total memory in a --query-gpu log.
type Analyzer struct {
	opt    Options
	series map[seriesKey]*series
	order  []*series
	inputs map[string]*inputInfo
	nin    int
	last   *series
	// scoped lists the series by scopeOf their key; alias gives the series
	// of a key that sameDevice found to be another's.
	scoped map[seriesKey][]*series
	alias  map[seriesKey]*series
	// byUUID is the series of each input, GPU UUID and pid (none for a
	// GPU): where a row names that UUID under another host, it is the
	// same device (sameHostless).
	byUUID map[uuidKey]*series
	names  callsite.Interner // dictionary values kept in series keys, copied out of the batches
	// gpusIn and procsIn are each group's GPU and process series, in
	// order (link).
	gpusIn, procsIn map[int][]*series
	unknownProcs    []unknownProc // process rows with their memory unknown
	batches         uint64        // Add calls
}

type inputInfo struct {
	order          int
	startUs, endUs int64
	hasSpan        bool
	// listedUs: times at which the input lists every process of its GPUs
	// (ProcessesListed), ascending.
	listedUs []int64
	// partialUs: times at which the input's process list is partial
	// (ProcessesPartial), ascending.
	partialUs []int64
	// graphics: pids the input listed as graphics processes (Graphics).
	graphics []int64
}

// PodSpan is a span of a series' samples whose DCGM exporter labels
// named one pod (or, for a GPU shared by several pods, the same list of
// them, comma-separated in the same order in each field): times in µs
// since the Unix epoch, of its first and last sample.
type PodSpan struct {
	Pod, Namespace, Container string
	FirstUs, LastUs           int64
	Samples                   int
}

// maxPodSpans bounds the pod spans a series keeps; more are counted.
const maxPodSpans = 64

// seriesKey identifies a series: a GPU or a process on one. The pod
// labels are not in it: they say who held the GPU at the time, and
// change over its life (PodSpan).
type seriesKey struct {
	input, host, uuid string
	gpu               int32
	hasGPU            bool
	pid               int64
	hasPID            bool
}

type series struct {
	key                      seriesKey
	source, gpuName, process string
	conv                     string
	// used and capacity hold the samples, decimated past maxSeriesPoints;
	// t, y, capT and capV are their points once Finalize flushed them.
	used, capacity decimated
	t              []int64
	y              []float64
	capT           []int64
	capV           []float64
	// raw counts the samples added; the first, last (by time), lowest and
	// peak samples are exact whatever the decimation.
	raw                        int
	firstT, lastT, peakT       int64
	firstV, lastV, minV, peakV float64
	group                      int
	fit                        fit
	out                        *SeriesTrend
	medianStep                 int64
	startUs, endUs             int64
	inputStartUs, inputEndUs   int64
	unsorted                   bool
	hasCap                     bool
	// peakN is the peak's sample number (1-based, in the order added);
	// maxTotal the largest GPU total memory its rows gave (-1: none).
	peakN    int
	maxTotal float64
	// over is the first sample whose used memory exceeds its GPU's
	// total (the row's, GPUMemoryBytes, or for a process its GPU's
	// series'); overN counts such samples (0: none).
	over  overTotal
	overN int
	// left counts the samples above their GPU's total (the row's, or
	// GPUMemoryBytes) left out of the series (not in raw): the first of
	// them is over when left > 0. A process series above its GPU's total
	// (found only once every log is read) keeps its samples: overN > 0,
	// left 0.
	left int
	// batch is the last Add (Analyzer.batches) that gave the series a
	// row: the text that is one value for a whole batch is taken once.
	batch uint64
	// pods: who held the GPU when (PodSpan); podsLeft counts the spans
	// past maxPodSpans.
	pods     []PodSpan
	podsLeft int
	// renamedBy: rows of its input named its device in two ways (with
	// its UUID and without, with its index and without), matched by this
	// ("its UUID", ...): sameDevice; "" when they did not.
	renamedBy string
	// otherHosts: the host names its rows gave after the first one
	// (key.host), in order, the first maxHostsNamed of them: the same
	// UUID under a host renamed (sameHostless); otherHostsN counts them
	// all, lastHost is the last.
	otherHosts  []string
	otherHostsN int
	lastHost    string
}

// maxHostsNamed bounds the host names hostsWarning lists (a log of a
// year of DCGM exporter restarts renames a GPU's host hundreds of times).
const maxHostsNamed = 4

// uuidKey is the part of a series key that names a device wherever it
// is: its input, GPU UUID and pid.
type uuidKey struct {
	input, uuid string
	pid         int64
	hasPID      bool
}

// NewAnalyzer returns an analyzer with options opt.
func NewAnalyzer(opt Options) *Analyzer {
	if opt.MinSamples <= 0 {
		opt.MinSamples = 8
	}
	if opt.MinR2 <= 0 {
		opt.MinR2 = 0.5
	}
	if opt.MaxExtrapolation <= 0 {
		opt.MaxExtrapolation = 20
	}
	return &Analyzer{opt: opt, series: map[seriesKey]*series{}, scoped: map[seriesKey][]*series{}, inputs: map[string]*inputInfo{}, names: callsite.Interner{}}
}

func (a *Analyzer) input(name string) *inputInfo {
	in := a.inputs[name]
	if in == nil {
		in = &inputInfo{order: a.nin}
		a.nin++
		a.inputs[name] = in
	}
	return in
}

// Input declares the time span an input's log covers (nvml.Metadata's
// FirstUs and LastUs), which may reach past its samples: pmon's rows
// without a process, a GPU log running on after its processes exit.
func (a *Analyzer) Input(name string, startUs, endUs int64) {
	in := a.input(name)
	in.startUs, in.endUs, in.hasSpan = startUs, endUs, true
}

// ProcessesListed declares the times at which input name lists every
// process nvidia-smi saw on its GPUs (nvml.Metadata's ProcessesListedUs):
// a GPU sample of the input at one of them with no process listed is
// memory no listed process accounts for, all of it.
func (a *Analyzer) ProcessesListed(name string, times []int64) {
	in := a.input(name)
	in.listedUs = append(in.listedUs, times...)
	slices.Sort(in.listedUs)
}

// ProcessesPartial declares the times at which input name lists only
// part of the processes on its GPUs (nvml.Metadata's ProcessesPartialUs:
// a pasted table cut in or before its Processes box): a GPU sample of the
// input then is left out of what no listed process accounts for, since
// the processes cut off may hold it.
func (a *Analyzer) ProcessesPartial(name string, times []int64) {
	in := a.input(name)
	in.partialUs = append(in.partialUs, times...)
	slices.Sort(in.partialUs)
}

// Graphics declares the pids input name listed as graphics processes
// alone (nvml.Metadata's GraphicsPIDs: type G in a table's Processes
// box), whose series are marked SeriesTrend.Graphics.
func (a *Analyzer) Graphics(name string, pids []int64) {
	in := a.input(name)
	in.graphics = append(in.graphics, pids...)
}

// Drop forgets every sample of input name: an input that failed part way
// through is left out whole rather than judged on the samples read before
// its error.
func (a *Analyzer) Drop(name string) {
	kept := a.order[:0]
	for _, s := range a.order {
		if s.key.input == name {
			delete(a.series, s.key)
			delete(a.scoped, scopeOf(s.key))
			continue
		}
		kept = append(kept, s)
	}
	for k := range a.alias {
		if k.input == name {
			delete(a.alias, k)
		}
	}
	for k := range a.byUUID {
		if k.input == name {
			delete(a.byUUID, k)
		}
	}
	clear(a.order[len(kept):])
	a.order = kept
	delete(a.inputs, name)
	a.last = nil
}

// Add feeds one samples record batch of input name. It returns an error
// when the batch does not have nvml.Schema.
func (a *Analyzer) Add(name string, rec arrow.RecordBatch) error {
	if !rec.Schema().Equal(nvml.Schema) {
		return fmt.Errorf("analyze: samples batch has schema %s", rec.Schema())
	}
	a.input(name)
	a.batches++
	tcol := rec.Column(nvml.ColTime).(*array.Timestamp)
	gpu := rec.Column(nvml.ColGPU).(*array.Int32)
	pid := rec.Column(nvml.ColPID).(*array.Int64)
	used := rec.Column(nvml.ColUsed).(*array.Int64)
	total := rec.Column(nvml.ColTotal).(*array.Int64)
	free := rec.Column(nvml.ColFree).(*array.Int64)
	reserved := rec.Column(nvml.ColReserved).(*array.Int64)
	text := func(col int) dictText {
		d := rec.Column(col).(*array.Dictionary)
		dict := d.Dictionary().(*array.String)
		// Series keys outlive the batch, whose buffers are reused: copy
		// each dictionary value once, not each row.
		vals := make([]string, dict.Len())
		for j := range vals {
			vals[j] = a.names.Get(dict.Value(j))
		}
		c := dictText{vals: vals, same: -2}
		switch {
		case d.NullN() == d.Len():
			c.same = -1
		case d.NullN() == 0 && len(vals) == 1:
			c.same = 0
		default:
			c.rows = dictRows(d)
		}
		return c
	}
	host, uuid, gname, proc := text(nvml.ColHost), text(nvml.ColUUID), text(nvml.ColGPUName), text(nvml.ColProcess)
	pod, ns, ctr := text(nvml.ColPod), text(nvml.ColNamespace), text(nvml.ColContainer)
	source, conv := text(nvml.ColSource), text(nvml.ColConvention)
	// A row's series, found by its dictionary indices (cheap to hash and
	// compare) rather than by its key's strings; rows of a few GPUs
	// interleave, so the last row's series alone rarely serves.
	type rowKey struct {
		gpu, host, uuid int32
		pid             int64
		hasGPU, hasPID  bool
	}
	cache := map[rowKey]*series{}
	// Before the map: the series of the row period rows back (of the last
	// 16 rows with a value, in ring), period learned from the rows: the
	// GPUs of a --query-gpu log take turns, each row the next GPU's.
	type recent struct {
		k rowKey
		s *series
	}
	var ring [16]recent
	period, rows := 1, 0
	// Whole columns valid (or null): IsValid's bitmap read once a batch,
	// not once a row.
	usedNulls, gpuAll, pidAny := used.NullN() > 0, gpu.NullN() == 0, pid.NullN() < pid.Len()
	freeAll, totalAll := free.NullN() == 0, total.NullN() == 0
	for i := 0; i < int(rec.NumRows()); i++ {
		if usedNulls && used.IsNull(i) {
			if pidAny && pid.IsValid(i) && len(a.unknownProcs) < maxUnknownProcs {
				// A process listed with its memory unknown (cut by
				// nvidia-smi, N/A, a placeholder): no sample, but the
				// GPU's memory that no listed process accounts for may
				// be its.
				u := unknownProc{input: name, host: host.at(i), uuid: uuid.at(i), pid: pid.Value(i), tUs: int64(tcol.Value(i))}
				if gpuAll || gpu.IsValid(i) {
					u.gpu, u.hasGPU = gpu.Value(i), true
				}
				if u.hasGPU || u.uuid != "" {
					a.unknownProcs = append(a.unknownProcs, u)
				}
			}
			continue
		}
		rk := rowKey{host: host.index(i), uuid: uuid.index(i)}
		if gpuAll || gpu.IsValid(i) {
			rk.gpu, rk.hasGPU = gpu.Value(i), true
		}
		if pidAny && pid.IsValid(i) {
			rk.pid, rk.hasPID = pid.Value(i), true
		}
		var s *series
		if r := ring[(rows-period)&15]; rows >= period && r.k == rk {
			s = r.s
		} else {
			s = cache[rk]
			for p := 1; p <= min(rows, 16); p++ {
				if ring[(rows-p)&15].k == rk {
					period = p
					break
				}
			}
		}
		ring[rows&15] = recent{rk, s} // s nil: set below
		rows++
		if s == nil {
			k := seriesKey{input: name, host: host.at(i), uuid: uuid.at(i),
				gpu: rk.gpu, hasGPU: rk.hasGPU, pid: rk.pid, hasPID: rk.hasPID}
			s = a.last
			if s == nil || s.key != k {
				s = a.series[k]
				if s == nil {
					s = a.alias[k]
				}
				if s == nil {
					k.input, k.host, k.uuid = strings.Clone(k.input), strings.Clone(k.host), strings.Clone(k.uuid)
					if s = a.sameHostless(k, int64(tcol.Value(i))); s == nil {
						s = a.sameDevice(k, gname.at(i), proc.at(i))
					}
					if s == nil {
						s = &series{key: k, source: strings.Clone(source.at(i)), maxTotal: -1}
						a.series[k] = s
						a.order = append(a.order, s)
						sk := scopeOf(k)
						a.scoped[sk] = append(a.scoped[sk], s)
						if k.uuid != "" {
							if a.byUUID == nil {
								a.byUUID = map[uuidKey]*series{}
							}
							uk := uuidKey{k.input, k.uuid, k.pid, k.hasPID}
							if a.byUUID[uk] == nil {
								a.byUUID[uk] = s
							}
						}
					}
				}
			}
			cache[rk] = s
			ring[(rows-1)&15].s = s
		}
		a.last = s
		k := &s.key
		t := int64(tcol.Value(i))
		v := float64(used.Value(i))
		// Used memory above the GPU's total is no reading of a real GPU: a
		// damaged row, or figures in units that do not match (a MIG
		// instance's against its whole GPU's). Such a sample is left out
		// of the series (it would make a trend of its own: a "growth" of
		// PiB/s, a peak no GPU has), counted, and said.
		switch {
		case totalAll || total.IsValid(i):
			tot := float64(total.Value(i))
			s.maxTotal = max(s.maxTotal, tot)
			if v > tot {
				s.leaveOut(overTotal{n: s.raw + s.overN + 1, t: t, used: v, total: tot, of: "the GPU's total memory in its row"})
				continue
			}
		case !k.hasPID && a.opt.GPUMemoryBytes > 0 && v > float64(a.opt.GPUMemoryBytes):
			s.leaveOut(overTotal{n: s.raw + s.overN + 1, t: t, used: v, total: float64(a.opt.GPUMemoryBytes), of: "the GPU memory given (--gpu-memory)"})
			continue
		}
		if s.raw > 0 && t < s.lastT {
			s.unsorted = true
		}
		s.used.add(t, v)
		switch {
		case s.raw == 0:
			s.firstT, s.firstV, s.lastT, s.lastV, s.minV, s.peakT, s.peakV = t, v, t, v, v, t, v
			s.peakN = s.overN + 1
		default:
			if t < s.firstT {
				s.firstT, s.firstV = t, v
			}
			if t >= s.lastT {
				s.lastT, s.lastV = t, v
			}
			s.minV = min(s.minV, v)
			if v > s.peakV {
				s.peakT, s.peakV, s.peakN = t, v, s.raw+s.overN+1
			}
		}
		s.raw++
		if pod.same != -1 {
			s.heldBy(pod.at(i), ns.at(i), ctr.at(i), t)
		}
		// The interned values themselves (copies already): the next row's
		// equal value is then the same string, compared without reading
		// its bytes. A column of one value (or none) in the whole batch
		// is taken at the series' first row of the batch alone: its
		// other rows would set what that row set.
		if s.batch != a.batches {
			s.batch = a.batches
			if gname.same >= -1 {
				s.takeGPUName(gname.at(i))
			}
			if proc.same >= -1 {
				s.takeProcess(proc.at(i))
			}
			if conv.same >= -1 {
				s.conv = conv.at(i)
			}
		}
		if gname.same == -2 {
			s.takeGPUName(gname.at(i))
		}
		if proc.same == -2 {
			s.takeProcess(proc.at(i))
		}
		if conv.same == -2 {
			if c := conv.at(i); c != s.conv {
				s.conv = c
			}
		}
		if !k.hasPID {
			var capacity float64
			ok := true
			switch {
			case freeAll || free.IsValid(i):
				capacity = float64(used.Value(i) + free.Value(i))
			case totalAll || total.IsValid(i):
				capacity = float64(total.Value(i))
				if reserved.IsValid(i) && conv.at(i) != string(nvml.IncludesReservedUnknown) {
					capacity -= float64(reserved.Value(i))
				}
			default:
				ok = false
			}
			if ok {
				s.capacity.add(t, capacity)
				s.hasCap = true
			}
		}
	}
	return nil
}

// heldBy notes that the sample at t named pod (in namespace, container)
// as the GPU's holder: it extends the last span when the pod is the
// same, else begins another. An empty pod names none.
func (s *series) heldBy(pod, namespace, container string, t int64) {
	if pod == "" {
		return
	}
	if n := len(s.pods); n > 0 {
		p := &s.pods[n-1]
		if p.Pod == pod && p.Namespace == namespace && p.Container == container {
			p.FirstUs, p.LastUs, p.Samples = min(p.FirstUs, t), max(p.LastUs, t), p.Samples+1
			return
		}
	}
	if len(s.pods) == maxPodSpans {
		s.podsLeft++
		return
	}
	s.pods = append(s.pods, PodSpan{Pod: pod, Namespace: namespace, Container: container, FirstUs: t, LastUs: t, Samples: 1})
}

// scopeOf is the part of a series key that rows of one device always
// share, whatever names the device: its input, host and pid (none for a
// GPU).
func scopeOf(k seriesKey) seriesKey {
	k.uuid, k.gpu, k.hasGPU = "", 0, false
	return k
}

// sameHostless is the series of input k.input that a row of key k, at
// time tUs, belongs to though its host differs, or nil: the series of
// the same well-formed GPU UUID (wellFormedUUID; and pid), whose last sample came before the row,
// and whose index, where both give one, is the row's. A GPU's UUID is
// its own (NVML's, unique to the board; a MIG instance's is its GPU's
// and instance's): a new host name for it in later rows is the host
// renamed, not another GPU. The DCGM exporter names its Hostname label
// after its own pod when run in Kubernetes without NODE_NAME or host
// networking (every version before NVIDIA/dcgm-exporter#129, merged
// 2023-01; later ones so configured, NVIDIA/gpu-operator#1545), so the
// exporter's restart renames every GPU of the node. Rows of two hosts at
// overlapping times (the same UUID copied to two machines, a
// placeholder) stay apart: the row must come after the series' last
// sample. The series keeps its first host; otherHosts lists the others
// and the input warns.
func (a *Analyzer) sameHostless(k seriesKey, tUs int64) *series {
	if !wellFormedUUID(k.uuid) {
		return nil
	}
	c := a.byUUID[uuidKey{k.input, k.uuid, k.pid, k.hasPID}]
	if c == nil || c.key.host == k.host || c.raw == 0 || tUs <= c.lastT ||
		c.key.hasGPU && k.hasGPU && c.key.gpu != k.gpu {
		return nil
	}
	if a.alias == nil {
		a.alias = map[seriesKey]*series{}
	}
	a.alias[k] = c
	if len(c.otherHosts) < maxHostsNamed {
		c.otherHosts = append(c.otherHosts, k.host)
	}
	c.otherHostsN++
	c.lastHost = k.host
	return c
}

// wellFormedUUID reports whether u is a GPU UUID as NVML writes it,
// "GPU-" and 32 hex digits in groups of 8-4-4-4-12 (a MIG instance's
// "MIG-" forms, and "/..." after it, as the DCGM parser adds for
// GPU_I_ID, are allowed): one that names a GPU. A UUID masked in a paste
// ("GPU-********", "GPU-<UUID>", "GPU-xxxxxxxx-..."), as people post them
// (NVIDIA/dcgm-exporter#512, #27), or a made-up short one, names none.
func wellFormedUUID(u string) bool {
	u, _, _ = strings.Cut(u, "/")
	mig, ok := strings.CutPrefix(u, "MIG-")
	if ok {
		u = strings.TrimPrefix(mig, "GPU-") // "MIG-GPU-<uuid>/gi/ci" before driver R470
	} else if u, ok = strings.CutPrefix(u, "GPU-"); !ok {
		return false
	}
	if len(u) != 36 {
		return false
	}
	for i, c := range u {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// maskedUUID reports whether u is a GPU UUID blanked out in a paste, the
// same on every GPU: "GPU-" (or "MIG-") then only x's and dashes
// ("GPU-xxxxxxxx-xxxx-..."), or anything holding '*', '<' or '>'
// ("GPU-********" in NVIDIA/dcgm-exporter#512, "GPU-<UUID>" in #27), or
// "..." .
func maskedUUID(u string) bool {
	if strings.ContainsAny(u, "*<>") || strings.Contains(u, "...") {
		return true
	}
	rest, ok := strings.CutPrefix(u, "GPU-")
	if !ok {
		rest, ok = strings.CutPrefix(u, "MIG-")
	}
	rest, _, _ = strings.Cut(rest, "/")
	return ok && strings.Trim(rest, "xX-") == "" && strings.ContainsAny(rest, "xX")
}

// sameDevice is the series of input k.input that a row of key k (and GPU
// name gname, process name proc) belongs to though its key differs, or
// nil: rows of one log that name a GPU in two ways, with its UUID and
// without (a logger restarted with another --query-gpu list and appended
// to the same file; a UUID that is a placeholder in some rows). It is
// the one series of k's scope (scopeOf) whose identity agrees with the
// row's: no UUID, index, GPU name or process name that both give differs,
// and one way to identify it that both give is the same - a GPU by its
// UUID, or by its index and name; a process by its pid (in the scope).
// The series takes the row's UUID or index where it had none (its rows so
// far are of the same device), and a note for the input says so.
func (a *Analyzer) sameDevice(k seriesKey, gname, proc string) *series {
	var found *series
	by := ""
	for _, c := range a.scoped[scopeOf(k)] {
		ck := &c.key
		switch {
		case ck.uuid != "" && k.uuid != "" && ck.uuid != k.uuid,
			ck.hasGPU && k.hasGPU && ck.gpu != k.gpu,
			c.gpuName != "" && gname != "" && c.gpuName != gname,
			c.process != "" && proc != "" && c.process != proc:
			continue // another device
		}
		same := k.hasPID || // the pid, in the scope
			ck.uuid != "" && ck.uuid == k.uuid ||
			ck.hasGPU && k.hasGPU && c.gpuName != "" && gname != ""
		if !same {
			continue
		}
		if found != nil {
			return nil // two could be it: none is
		}
		found = c
		switch {
		case k.hasPID:
			by = "its pid"
		case ck.uuid != "" && ck.uuid == k.uuid:
			by = "its UUID"
		default:
			by = "its index and name"
		}
	}
	if found == nil {
		return nil
	}
	if a.alias == nil {
		a.alias = map[seriesKey]*series{}
	}
	a.alias[k] = found
	was := found.key
	if was.uuid == "" && k.uuid != "" || !was.hasGPU && k.hasGPU {
		delete(a.series, was)
		a.alias[was] = found
		if was.uuid == "" {
			found.key.uuid = k.uuid
		}
		if !was.hasGPU && k.hasGPU {
			found.key.gpu, found.key.hasGPU = k.gpu, true
		}
		a.series[found.key] = found
	}
	if found.renamedBy == "" {
		found.renamedBy = by
	}
	return found
}

// takeGPUName and takeProcess keep a row's GPU name or process name
// (interned) when it has one.
func (s *series) takeGPUName(g string) {
	if g != "" && g != s.gpuName {
		s.gpuName = g
	}
}

func (s *series) takeProcess(p string) {
	if p != "" && p != s.process {
		s.process = p
	}
}

// dictText reads a dictionary-encoded text column of a batch.
type dictText struct {
	vals []string // the dictionary, interned
	// same is every row's index when the batch has one (-1: all null),
	// else -2: most text columns hold one value, or none, in a whole log.
	same int32
	// rows are the rows' indices when same is -2 (-1: null).
	rows []int32
}

// dictRows is each row's dictionary index in d, -1 for a null: read in
// one pass over the typed indices, where GetValueIndex switches on their
// type for each row.
func dictRows(d *array.Dictionary) []int32 {
	rows := make([]int32, d.Len())
	switch ix := d.Indices().(type) {
	case *array.Int8:
		for i, k := range ix.Int8Values() {
			rows[i] = int32(k)
		}
	case *array.Int16:
		for i, k := range ix.Int16Values() {
			rows[i] = int32(k)
		}
	case *array.Int32:
		copy(rows, ix.Int32Values())
	default:
		for i := range rows {
			if d.IsValid(i) {
				rows[i] = int32(d.GetValueIndex(i))
			}
		}
	}
	if d.NullN() > 0 {
		for i := range rows {
			if d.IsNull(i) {
				rows[i] = -1
			}
		}
	}
	return rows
}

// index is row i's index into vals, -1 when null.
func (c dictText) index(i int) int32 {
	if c.same >= -1 {
		return c.same
	}
	return c.rows[i]
}

// at is row i's value, "" when null.
func (c dictText) at(i int) string {
	if j := c.index(i); j >= 0 {
		return c.vals[j]
	}
	return ""
}

// Finalize fits every series and links GPUs and processes across inputs.
func (a *Analyzer) Finalize() *Result {
	res := &Result{}
	// Samples above their GPU's total were left out (Add): counted by
	// input, said in a warning; a series left with none is no series.
	kept := a.order[:0]
	for _, s := range a.order {
		if s.left > 0 {
			if res.AboveTotal == nil {
				res.AboveTotal = map[string]int{}
			}
			res.AboveTotal[s.key.input] += s.left
		}
		if s.raw == 0 {
			if w := overTotalWarning(s); w != "" {
				if res.InputWarnings == nil {
					res.InputWarnings = map[string][]string{}
				}
				res.InputWarnings[s.key.input] = append(res.InputWarnings[s.key.input], w)
			}
			delete(a.series, s.key)
			continue
		}
		kept = append(kept, s)
	}
	clear(a.order[len(kept):])
	a.order = kept
	for _, s := range a.order {
		s.used.flush()
		s.capacity.flush()
		s.t, s.y, s.capT, s.capV = s.used.t, s.used.v, s.capacity.t, s.capacity.v
		a.prepare(s)
		if w := decimationWarning(s); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	a.link()
	// A GPU named by UUID in one log and by index in another is one GPU:
	// each series gets the index and UUID its group knows.
	index, uuid := map[int]int32{}, map[int]string{}
	for _, s := range a.order {
		if s.key.hasGPU {
			index[s.group] = s.key.gpu
		}
		if s.key.uuid != "" {
			uuid[s.group] = s.key.uuid
		}
	}
	a.fitAll()
	a.checkProcessTotals()
	for _, s := range a.order {
		for _, w := range []string{overTotalWarning(s), renamedWarning(s), hostsWarning(s)} {
			if w == "" {
				continue
			}
			if res.InputWarnings == nil {
				res.InputWarnings = map[string][]string{}
			}
			res.InputWarnings[s.key.input] = append(res.InputWarnings[s.key.input], w)
		}
	}
	for _, s := range a.order {
		if g, ok := index[s.group]; ok && !s.out.HasGPU {
			s.out.GPU, s.out.HasGPU = g, true
		}
		if s.out.UUID == "" {
			s.out.UUID = uuid[s.group]
		}
	}
	ends := a.gpuLogEnds()
	next := a.successors()
	for _, s := range a.order {
		if s.key.hasPID {
			a.processEnd(s)
		} else {
			end := ends[s.key.input+"\x00"+s.source]
			s.out.LogEndUs, s.out.StoppedBeforeEnd = end, s.endUs < end-s.tolerance()
			if s.out.StoppedBeforeEnd {
				if n := next[s]; n != nil {
					s.out.ReplacedBy, s.out.ReplacedAtUs = n.key.uuid, n.startUs
				}
			}
			a.unattributed(s)
		}
	}
	for _, s := range a.order {
		// After every process's end is known: a process's time to OOM
		// counts the others that grow on its GPU (gpuRate).
		a.timeToOOM(s)
		if !s.key.hasPID {
			for _, p := range a.procsIn[s.group] {
				if p.fit.class == Growing {
					s.out.GrowingPIDs = append(s.out.GrowingPIDs, p.key.pid)
				}
			}
			slices.Sort(s.out.GrowingPIDs)
		}
	}
	sorted := slices.Clone(a.order)
	slices.SortStableFunc(sorted, func(x, y *series) int {
		if d := cmp.Compare(a.inputs[x.key.input].order, a.inputs[y.key.input].order); d != 0 {
			return d
		}
		if d := cmp.Compare(gpuOrder(x.out), gpuOrder(y.out)); d != 0 {
			return d
		}
		if d := strings.Compare(x.key.host+x.out.UUID, y.key.host+y.out.UUID); d != 0 {
			return d
		}
		if x.key.hasPID != y.key.hasPID {
			return map[bool]int{false: -1, true: 1}[x.key.hasPID]
		}
		return cmp.Compare(x.key.pid, y.key.pid)
	})
	for _, s := range sorted {
		res.Series = append(res.Series, *s.out)
	}
	if len(a.order) == 0 && len(res.AboveTotal) == 0 {
		// (Samples all above their GPU's total have their own warning.)
		res.Warnings = append(res.Warnings, "no samples with a used-memory value")
	}
	return res
}

// fitAll fits every series and its runs, on every core: each series'
// fit reads and writes that series alone (a series split into many runs
// costs tens of milliseconds), so the result does not depend on the order.
func (a *Analyzer) fitAll() {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(a.order)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(a.order); i = int(next.Add(1)) - 1 {
				s := a.order[i]
				glitches, full := setAsideGlitchesBut(s.y, a.fullAt(s))
				// A lone full sample (one reading at the capacity between
				// two that agree far below it) is named, and kept in the
				// series' samples (its peak, its profile), but neither
				// classes nor fits it: one reading cannot tell a process
				// that filled the GPU and died within one interval from a
				// misreading, and one rise and fall is no churn (a
				// sawtooth) nor a step. Set aside for the fit and the runs
				// as a glitch is, so that the class does not hang on
				// whether binning a long series hid it in a bin's median.
				fy := s.y
				if len(full) > 0 {
					fy = slices.Clone(s.y)
					for _, g := range full {
						fy[g] = (fy[g-1] + fy[g+1]) / 2
					}
				}
				s.fit = fitSeries(s.t, fy)
				s.out = a.describe(s)
				s.out.SetAside = len(glitches)
				for _, g := range glitches[:min(len(glitches), glitchTimesKept)] {
					s.out.SetAsideUs = append(s.out.SetAsideUs, s.t[g])
				}
				s.out.FullSamples = len(full)
				for _, g := range full[:min(len(full), glitchTimesKept)] {
					s.out.FullSampleAt = append(s.out.FullSampleAt, Sample{Us: s.t[g], Bytes: int64(s.y[g])})
				}
				a.fitRuns(s, fy)
				podSteps(s)
			}
		}()
	}
	wg.Wait()
}

// byTime sorts times and their values together.
type byTime struct {
	t []int64
	v []float64
}

func (b byTime) Len() int           { return len(b.t) }
func (b byTime) Less(i, j int) bool { return b.t[i] < b.t[j] }
func (b byTime) Swap(i, j int) {
	b.t[i], b.t[j] = b.t[j], b.t[i]
	b.v[i], b.v[j] = b.v[j], b.v[i]
}

func gpuOrder(s *SeriesTrend) int64 {
	if s.HasGPU {
		return int64(s.GPU)
	}
	return math.MaxInt64
}

// prepare sorts a series by time and derives its sampling step and spans.
func (a *Analyzer) prepare(s *series) {
	if s.unsorted {
		sort.Stable(byTime{s.t, s.y})
		sort.Stable(byTime{s.capT, s.capV})
	}
	s.startUs, s.endUs = s.firstT, s.lastT // exact, where points may be means
	steps := make([]float64, 0, len(s.t))
	for i := 1; i < len(s.t); i++ {
		if d := s.t[i] - s.t[i-1]; d > 0 {
			steps = append(steps, float64(d))
		}
	}
	s.medianStep = int64(medianSelect(steps))
	in := a.inputs[s.key.input]
	s.inputStartUs, s.inputEndUs = s.startUs, s.endUs
	if in.hasSpan {
		s.inputStartUs, s.inputEndUs = min(in.startUs, s.startUs), max(in.endUs, s.endUs)
	}
}

// link puts series of one GPU in one group: the same UUID, or the same
// host and index over overlapping times when one of them lacks a UUID and
// their GPU names (where both give one) agree. At a host and index where
// a GPU was replaced (replacedSlots: two UUIDs there, one's samples all
// before the other's), a series without a UUID (a pmon or dmon log's) is
// the GPU's whose samples its own overlap, and is linked to nothing when
// they overlap two such GPUs' or none: the inputs' spans, which cover both
// GPUs, would join the GPU replaced and its successor in one group, and a
// process of the first would be named the second's.
func (a *Analyzer) link() {
	parent := make([]int, len(a.order))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(i, j int) { parent[find(i)] = find(j) }
	// The same UUID: one GPU. A masked one (maskedUUID) is the same on
	// every GPU of its paste: it links none.
	byUUID := map[string]int{}
	for i, x := range a.order {
		if x.key.uuid == "" || maskedUUID(x.key.uuid) {
			continue
		}
		if j, ok := byUUID[x.key.uuid]; ok {
			union(j, i)
		} else {
			byUUID[x.key.uuid] = i
		}
	}
	// The same host and index over overlapping times, when one of them
	// lacks a UUID (sameGPU). Series of one host and index that share
	// their UUID and their input's span are one GPU already (by UUID, or
	// by index over the same span): one of them stands for all in the
	// pairwise comparison, which would otherwise take time in the square
	// of the series (a log of 100,000 processes on one GPU).
	type slot struct {
		host string
		gpu  int32
	}
	type class struct {
		uuid, name string
		start, end int64
	}
	replaced := a.replacedSlots()
	reps := map[slot][]int{}
	repOf := map[slot]map[class]int{}
	for i, x := range a.order {
		if !x.key.hasGPU {
			continue
		}
		sl := slot{x.key.host, x.key.gpu}
		if uuids := replaced[gpuSlot{x.key.host, x.key.gpu}]; uuids != nil {
			if j := a.successionOf(x, uuids); j >= 0 {
				union(j, i)
			}
			continue
		}
		if x.inputStartUs <= x.inputEndUs {
			c := class{x.key.uuid, x.gpuName, x.inputStartUs, x.inputEndUs}
			if repOf[sl] == nil {
				repOf[sl] = map[class]int{}
			}
			if r, ok := repOf[sl][c]; ok {
				union(r, i)
				continue
			}
			repOf[sl][c] = i
		}
		reps[sl] = append(reps[sl], i)
	}
	for _, rs := range reps {
		for k, i := range rs {
			for _, j := range rs[k+1:] {
				if sameGPU(a.order[i], a.order[j]) {
					union(i, j)
				}
			}
		}
	}
	a.gpusIn, a.procsIn = map[int][]*series{}, map[int][]*series{}
	for i, s := range a.order {
		s.group = find(i)
		if s.key.hasPID {
			a.procsIn[s.group] = append(a.procsIn[s.group], s)
		} else {
			a.gpusIn[s.group] = append(a.gpusIn[s.group], s)
		}
	}
}

// successors maps each GPU series (well-formed UUID, an index) to the
// series of the same input, host and index with another well-formed UUID
// whose samples begin first after its last: the GPU that took its place.
// Absent where none does. Only one log's series are compared: two logs
// of index 0 on hosts neither names are not one host's GPUs.
func (a *Analyzer) successors() map[*series]*series {
	type at struct {
		input, host string
		gpu         int32
	}
	bySlot := map[at][]*series{}
	for _, x := range a.order {
		if x.key.hasPID || !x.key.hasGPU || !wellFormedUUID(x.key.uuid) || maskedUUID(x.key.uuid) {
			continue
		}
		k := at{x.key.input, x.key.host, x.key.gpu}
		bySlot[k] = append(bySlot[k], x)
	}
	out := map[*series]*series{}
	for _, xs := range bySlot {
		if len(xs) < 2 {
			continue
		}
		for _, x := range xs {
			for _, y := range xs {
				if y.key.uuid != x.key.uuid && y.startUs > x.endUs && (out[x] == nil || y.startUs < out[x].startUs) {
					out[x] = y
				}
			}
		}
	}
	return out
}

// gpuSlot is a GPU's place: its host and index.
type gpuSlot struct {
	host string
	gpu  int32
}

// uuidSpan is where a GPU UUID's series at one slot lie: the first
// series' position in Analyzer.order, and the span of their samples
// (microseconds).
type uuidSpan struct {
	first      int
	start, end int64
}

// replacedSlots returns, for each host and index where a GPU was replaced
// during the logs (two well-formed UUIDs there, the samples of one all
// before those of the other: an RMA, a node rebuilt), the spans of the
// UUIDs seen there; absent for other slots. UUIDs that overlap in time (a
// MIG GPU's instances, which share its index) are no replacement.
func (a *Analyzer) replacedSlots() map[gpuSlot]map[string]uuidSpan {
	bySlot := map[gpuSlot]map[string]uuidSpan{}
	for i, x := range a.order {
		if !x.key.hasGPU || x.key.uuid == "" || maskedUUID(x.key.uuid) || !wellFormedUUID(x.key.uuid) {
			continue
		}
		sl := gpuSlot{x.key.host, x.key.gpu}
		if bySlot[sl] == nil {
			bySlot[sl] = map[string]uuidSpan{}
		}
		sp, ok := bySlot[sl][x.key.uuid]
		if !ok {
			sp = uuidSpan{i, x.startUs, x.endUs}
		}
		sp.start, sp.end = min(sp.start, x.startUs), max(sp.end, x.endUs)
		bySlot[sl][x.key.uuid] = sp
	}
	out := map[gpuSlot]map[string]uuidSpan{}
	for sl, uuids := range bySlot {
		for u, x := range uuids {
			for v, y := range uuids {
				if u != v && x.end < y.start {
					out[sl] = uuids
				}
			}
		}
	}
	return out
}

// successionOf returns the position in Analyzer.order of the series that
// stands for the GPU x is at a replaced slot (replacedSlots; uuids its
// UUIDs and their spans): x's own UUID's; for x without one, the only
// UUID whose samples x's overlap, where its GPU name (if both give one)
// agrees; -1 when x overlaps two or none.
func (a *Analyzer) successionOf(x *series, uuids map[string]uuidSpan) int {
	if sp, ok := uuids[x.key.uuid]; ok {
		return sp.first
	}
	if x.key.uuid != "" {
		return -1 // a masked or malformed UUID: not one of them
	}
	at := -1
	for _, sp := range uuids {
		if x.startUs > sp.end || sp.start > x.endUs {
			continue
		}
		if y := a.order[sp.first]; x.gpuName != "" && y.gpuName != "" && x.gpuName != y.gpuName {
			continue
		}
		if at >= 0 {
			return -1 // across the replacement: neither GPU's alone
		}
		at = sp.first
	}
	return at
}

// sameGPU reports whether x and y, both with a GPU index, are one GPU by
// their host and index: over overlapping times, when one lacks a UUID or
// both have the same, and one lacks a GPU name or both have the same (two
// logs of index 0 on hosts that neither names, an A100's and an H100's,
// are two GPUs).
func sameGPU(x, y *series) bool {
	return x.key.gpu == y.key.gpu && x.key.host == y.key.host &&
		(x.key.uuid == "" || y.key.uuid == "" || x.key.uuid == y.key.uuid) &&
		(x.gpuName == "" || y.gpuName == "" || x.gpuName == y.gpuName) &&
		x.inputStartUs <= y.inputEndUs && y.inputStartUs <= x.inputEndUs
}

// describe turns a series and its fit into a SeriesTrend.
func (a *Analyzer) describe(s *series) *SeriesTrend {
	k, f := s.key, s.fit
	o := &SeriesTrend{AboveTotal: s.left,
		Input: k.input, Source: s.source, Host: k.host, GPU: k.gpu, HasGPU: k.hasGPU, UUID: k.uuid, GPUName: s.gpuName,
		PID: k.pid, HasPID: k.hasPID, Process: s.process, Pods: slices.Clone(s.pods), PodsLeftOut: s.podsLeft,
		Convention: s.conv, Samples: s.raw, StartUs: s.startUs, EndUs: s.endUs,
		FirstBytes: int64(s.firstV), LastBytes: int64(s.lastV),
		Class: f.class, WindowStartUs: f.winStartUs, WindowEndUs: f.winEndUs, WindowSamples: f.winSamples, RisingFloor: f.floor,
		Slope: finite(f.ts.Slope), SlopeLow: finite(f.ts.Low), SlopeHigh: finite(f.ts.High), OLSSlope: finite(f.olsSlope), R2: finite(f.r2),
		Noise: finite(f.sigma), ChangePoints: f.changes, LogEndUs: s.inputEndUs,
		WarmUpEndUs: f.warmUpEndUs, WarmUpToBytes: f.warmUpToBytes,
	}
	if in := a.inputs[k.input]; in != nil && k.hasPID && slices.Contains(in.graphics, k.pid) {
		o.Graphics = true
	}
	if len(s.pods) == 1 && s.podsLeft == 0 {
		p := s.pods[0]
		o.Pod, o.Namespace, o.Container = p.Pod, p.Namespace, p.Container
	}
	// A level is a median: report the sampled values on either side of a
	// change, so that every figure in a message was seen in the log.
	o.ChangePoints = slices.Clone(o.ChangePoints)
	for i := range o.ChangePoints {
		c := &o.ChangePoints[i]
		if v, ok := s.at(c.StartUs, s.tolerance()); ok {
			c.FromBytes = int64(v)
		}
		if v, ok := s.at(c.EndUs, s.tolerance()); ok {
			c.ToBytes = int64(v)
		}
	}
	if f.class == Growing && f.floor {
		o.CyclePeakBytes = int64(f.endLevel)
	}
	o.EndJump, o.EndJumpSamples = s.endJumpOf(f)
	o.StepAtEnd = f.class == Step && f.stepAtEnd
	if steps := Steps(o.ChangePoints); o.Class == Step && len(steps) > 0 {
		// A spike's rise and fall (ChangePoint.Transient) are no steps:
		// neither the tail nor the spacing is measured from them.
		if !o.StepAtEnd {
			o.StepTailUs, o.StepSpacingUs = stepTail(steps, s.endUs)
		}
		o.TailSlope = tailSlope(s.t, s.y, steps[len(steps)-1].EndUs)
	}
	o.MinBytes, o.PeakBytes, o.PeakUs = int64(s.minV), int64(s.peakV), s.peakT
	if s.hasCap {
		o.CapacityBytes = int64(s.capV[len(s.capV)-1])
	} else if !k.hasPID && a.opt.GPUMemoryBytes > 0 {
		o.CapacityBytes = a.opt.GPUMemoryBytes
	}
	o.Profile = profile(s.t, s.y, 48)
	return o
}

// endJumpOf is f's jump at the end (fit.endJump), nil when f has none,
// and the samples from its EndUs to the series' end.
func (s *series) endJumpOf(f fit) (*ChangePoint, int) {
	if !f.endJump || len(f.changes) == 0 {
		return nil, 0
	}
	c := f.changes[len(f.changes)-1]
	return &c, len(s.t) - sort.Search(len(s.t), func(i int) bool { return s.t[i] >= c.EndUs })
}

// stepTail is the time from the last of changes to end and the longest
// time between two consecutive changes (µs, from one's StartUs to the
// next's EndUs), when the changes hold two or more steps up, the last of
// them up, and the tail is no longer than the spacing
// (SeriesTrend.StepTailUs); 0, 0 otherwise.
func stepTail(changes []ChangePoint, end int64) (tail, spacing int64) {
	ups := 0
	for k, c := range changes {
		if c.ToBytes > c.FromBytes {
			ups++
		}
		if k > 0 {
			// From the start of one to the end of the next: a change's
			// times are those of binned points, either side of the step.
			spacing = max(spacing, c.EndUs-changes[k-1].StartUs)
		}
	}
	if n := len(changes); ups < 2 || changes[n-1].ToBytes <= changes[n-1].FromBytes {
		return 0, 0
	}
	tail = end - changes[len(changes)-1].EndUs
	if tail > spacing {
		return 0, 0
	}
	return tail, spacing
}

// tailSlope is the slope of the samples from time from on, when they
// still rise (see SeriesTrend.TailSlope).
func tailSlope(t []int64, y []float64, from int64) float64 {
	i := sort.Search(len(t), func(i int) bool { return t[i] >= from })
	if len(t)-i < 4 {
		return 0
	}
	x := make([]float64, len(t)-i)
	for k := range x {
		x[k] = float64(t[i+k]-t[i]) / 1e6
	}
	rx, ry := reduce(x, y[i:], trendMaxPoints)
	ts := fitTheilSen(rx, ry, trendConfidence)
	if !ts.ok || ts.Low <= 0 || ts.Slope*(rx[len(rx)-1]-rx[0]) < trendRiseAbs {
		return 0
	}
	return ts.Slope
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// profile is the highest value in each of up to parts equal parts of the
// series' time; an empty part repeats the one before.
func profile(t []int64, y []float64, parts int) []int64 {
	n := len(t)
	if n <= parts {
		out := make([]int64, n)
		for i, v := range y {
			out[i] = int64(v)
		}
		return out
	}
	out := make([]int64, parts)
	seen := make([]bool, parts)
	span := t[n-1] - t[0]
	for i, ti := range t {
		p := int(int64(parts) * (ti - t[0]) / (span + 1))
		if !seen[p] || int64(y[i]) > out[p] {
			out[p], seen[p] = int64(y[i]), true
		}
	}
	for p := 1; p < parts; p++ {
		if !seen[p] {
			out[p] = out[p-1]
		}
	}
	return out
}

// at returns the value of s nearest to time t, when t falls within the
// series (give or take tol).
func (s *series) at(t, tol int64) (float64, bool) {
	if t < s.startUs-tol || t > s.endUs+tol {
		return 0, false
	}
	i := sort.Search(len(s.t), func(i int) bool { return s.t[i] >= t })
	switch {
	case i == len(s.t):
		i--
	case i > 0 && t-s.t[i-1] < s.t[i]-t:
		i--
	}
	return s.y[i], true
}

// tolerance is how far from its samples a series still says something:
// one and a half sampling steps, at least half a second.
func (s *series) tolerance() int64 { return max(s.medianStep*3/2, 500_000) }

// capacityAt is the most a GPU's used memory can reach at time t from a
// GPU series' samples, when known.
func (s *series) capacityAt(t int64) (float64, bool) {
	if !s.hasCap || t < s.startUs-s.tolerance() || t > s.endUs+s.tolerance() {
		return 0, false
	}
	i := sort.Search(len(s.capT), func(i int) bool { return s.capT[i] >= t })
	if i == len(s.capT) || i > 0 && t-s.capT[i-1] < s.capT[i]-t {
		i--
	}
	return s.capV[i], true
}

// fullAt, for a GPU series whose capacity is known (its samples',
// or --gpu-memory), says whether its sample i is within a tenth of it
// (oomPeakShare): the GPU full. nil for a process, or a capacity not
// known.
func (a *Analyzer) fullAt(s *series) func(i int) bool {
	switch {
	case s.key.hasPID:
		return nil
	case s.hasCap:
		return func(i int) bool {
			c, ok := s.capacityAt(s.t[i])
			return ok && s.y[i] >= oomPeakShare*c
		}
	case a.opt.GPUMemoryBytes > 0:
		c := float64(a.opt.GPUMemoryBytes)
		return func(i int) bool { return s.y[i] >= oomPeakShare*c }
	}
	return nil
}

// gpusOf returns the GPU series of s's group that cover time t.
func (a *Analyzer) gpusOf(s *series, t int64) []*series {
	var out []*series
	for _, g := range a.gpusIn[s.group] {
		if t >= g.startUs-g.tolerance() && t <= g.endUs+g.tolerance() {
			out = append(out, g)
		}
	}
	return out
}

// gpuLogEnds gives, for each input and layout (keyed input NUL source),
// where its GPU samples end: the input's end (its rows without a memory
// figure count: a lost GPU's [GPU is lost] rows) where its GPU series are
// of one layout; where a paste holds outputs of several (gpustat's text,
// then nvidia-smi's table), each layout's own last GPU sample, so that a
// GPU of the first output is not taken for one that stopped.
func (a *Analyzer) gpuLogEnds() map[string]int64 {
	ends := map[string]int64{}
	layouts := map[string]map[string]bool{}
	for _, s := range a.order {
		if s.key.hasPID {
			continue
		}
		k := s.key.input + "\x00" + s.source
		ends[k] = max(ends[k], s.endUs)
		if layouts[s.key.input] == nil {
			layouts[s.key.input] = map[string]bool{}
		}
		layouts[s.key.input][s.source] = true
	}
	for _, s := range a.order {
		if k := s.key.input + "\x00" + s.source; !s.key.hasPID && len(layouts[s.key.input]) == 1 {
			ends[k] = max(ends[k], s.inputEndUs)
		}
	}
	return ends
}

// processEnd decides whether a process held memory to the end of the log:
// its own input's, or a later end of a GPU log that covers it.
func (a *Analyzer) processEnd(s *series) {
	end := s.inputEndUs
	for _, g := range a.gpusOf(s, s.endUs) {
		end = max(end, g.inputEndUs)
	}
	s.out.LogEndUs = end
	s.out.HeldToEnd = s.endUs >= end-s.tolerance()
	// nvidia-smi --query-compute-apps prints nothing once no process runs:
	// alone, its log ends with the last process's last row, whether that
	// process exited or the logging stopped.
	s.out.EndUnknown = s.out.HeldToEnd && s.source == string(nvml.FormatQueryApps) && len(a.gpusOf(s, s.endUs)) == 0
}

// unattributed compares a GPU series with its processes' series: at each
// GPU sample taken while processes were logged, and while the GPU held
// memory or a process was listed, the GPU's used memory less the sum of
// the processes' (each counted once: from the GPU's own input when it
// lists processes, else from the input that samples it most often); and
// at each sample of the GPU's own input at a time it lists every process
// (ProcessesListed), with none listed for the GPU, all its used memory.
func (a *Analyzer) unattributed(g *series) {
	byPID := map[int64]*series{}
	var from, to int64 = math.MaxInt64, math.MinInt64
	for _, p := range a.procsIn[g.group] {
		if p.inputStartUs > g.endUs || g.startUs > p.inputEndUs {
			continue
		}
		from, to = min(from, p.inputStartUs), max(to, p.inputEndUs)
		q := byPID[p.key.pid]
		switch {
		case q == nil:
		case q.key.input == g.key.input:
			continue
		case p.key.input != g.key.input && p.medianStep >= q.medianStep:
			continue
		}
		byPID[p.key.pid] = p
	}
	// Times at which g's own input (an nvidia-smi table) lists every
	// process it saw: a GPU sample then with no process is unattributed
	// whole.
	var listedUs, partialUs []int64
	if in := a.inputs[g.key.input]; in != nil {
		listedUs, partialUs = in.listedUs, in.partialUs
	}
	// Processes listed on g with their memory unknown: in g's own input
	// on its index, or in any input on its UUID (a --query-compute-apps
	// log beside a --query-gpu log), while g was sampled.
	var unknown []unknownProc
	for _, p := range a.unknownProcs {
		onG := p.input == g.key.input && p.host == g.key.host && p.hasGPU && g.key.hasGPU && p.gpu == g.key.gpu ||
			p.uuid != "" && p.uuid == g.key.uuid
		if onG && p.tUs >= g.startUs && p.tUs <= g.endUs {
			unknown = append(unknown, p)
			from, to = min(from, p.tUs), max(to, p.tUs)
		}
	}
	if len(byPID) == 0 && len(listedUs) == 0 && len(unknown) == 0 {
		return
	}
	isListed := func(t int64) bool {
		_, ok := slices.BinarySearch(listedUs, t)
		return ok
	}
	pFrom, pTo := from, to
	if len(listedUs) > 0 {
		from, to = min(from, listedUs[0]), max(to, listedUs[len(listedUs)-1])
	}
	var diffs []float64
	// A process listed with its memory unknown is listed: the GPU is not
	// one with none listed, though that memory counts in no sum.
	u := &Unattributed{NoneListed: len(unknown) == 0}
	for i, t := range g.t {
		if (t < pFrom || t > pTo) && !isListed(t) {
			continue
		}
		if _, partial := slices.BinarySearch(partialUs, t); partial {
			continue // processes cut off the list may hold the rest
		}
		sum, listed := 0.0, false
		for _, p := range byPID {
			// Sampled in step with the GPU or not, a live process has a sample
			// within half its period; a little more absorbs jitter.
			if v, ok := p.at(t, max(p.medianStep*6/10, 100_000)); ok {
				sum += v
				listed = true
			}
		}
		if !listed && g.y[i] == 0 {
			continue
		}
		if listed {
			u.NoneListed = false
		}
		diffs = append(diffs, g.y[i]-sum)
	}
	if len(diffs) == 0 {
		return
	}
	u.Samples = len(diffs)
	for _, p := range unknown {
		if !slices.Contains(u.UnknownPIDs, p.pid) && len(u.UnknownPIDs) < maxUnknownPIDs {
			u.UnknownPIDs = append(u.UnknownPIDs, p.pid)
		}
	}
	slices.Sort(u.UnknownPIDs)
	u.MedianBytes = int64(medianOf(diffs))
	u.EndBytes = int64(medianOf(diffs[max(0, len(diffs)-5):]))
	if u.MedianBytes < 0 {
		u.ProcessesOverBytes = -u.MedianBytes
	}
	u.MedianBytes, u.EndBytes = max(u.MedianBytes, 0), max(u.EndBytes, 0)
	g.out.Unattributed = u
}

// timeToOOM estimates when a growing series exhausts its GPU, or says why not.
func (a *Analyzer) timeToOOM(s *series) {
	o, f := s.out, s.fit
	if s.overN > s.left {
		// First: samples no GPU could give (a process's above its GPU's
		// total, found once every log was read) shaped the class too.
		o.NoOOMReason = fmt.Sprintf("used memory above the GPU's total in %d of %d samples (the first: sample %d): the samples cannot give a time to OOM",
			s.overN, s.raw, s.over.n)
		return
	}
	switch f.class {
	case Flat:
		o.NoOOMReason = "flat: no growth"
		return
	case Sawtooth:
		o.NoOOMReason = "sawtooth: the memory is given back"
		return
	case Step:
		o.NoOOMReason = "a one-time step, then no growth"
		if f.stepAtEnd {
			o.NoOOMReason = "a step up to the last samples: too few after it for a trend"
			if o.LastBytes < o.FirstBytes {
				o.NoOOMReason = "a step down to the last samples: too few after it for a trend"
			}
		}
		return
	case Undetermined:
		o.NoOOMReason = "one sample (or all at one time): no trend can be judged"
		return
	}
	if o.ReleasedUs != 0 && o.OOMExits > 0 {
		o.NoOOMReason = fmt.Sprintf("the GPU was already full: %s reached %.0f%% of its capacity or more and then fell to near nothing",
			counted(o.OOMExits, "run", "runs"), 100*oomPeakShare)
		return
	}
	if o.ReleasedUs != 0 {
		o.NoOOMReason = "the run ended: memory went back to the baseline (the process exited or freed it)"
		return
	}
	if s.key.hasPID && !o.HeldToEnd {
		o.NoOOMReason = "the process exited before the end of the log (its memory was released)"
		return
	}
	if o.StoppedBeforeEnd {
		// A rate from samples that stopped says nothing of the memory
		// since: the GPU was lost, replaced, or no longer logged.
		o.NoOOMReason = "the GPU's samples stop before the end of the log"
		return
	}
	if f.winSamples < a.opt.MinSamples {
		o.NoOOMReason = fmt.Sprintf("only %s in the trend (%d needed)", counted(f.winSamples, "sample", "samples"), a.opt.MinSamples)
		if f.floor {
			// The trend of a floor that rises is fitted to each cycle's
			// lowest point, not to the samples: count cycles.
			o.NoOOMReason = fmt.Sprintf("only %s in the trend (its line is fitted to each cycle's lowest point; %d cycles needed)",
				counted(f.winSamples, "cycle", "cycles"), a.opt.MinSamples)
		}
		return
	}
	if why := shortTail(s, a.opt.MinSamples, a.opt.MaxExtrapolation); why != "" {
		o.NoOOMReason = why
		return
	}
	if f.ts.Low <= 0 {
		o.NoOOMReason = "the growth rate's 95% interval includes zero"
		return
	}
	if f.r2 < a.opt.MinR2 {
		o.NoOOMReason = fmt.Sprintf("the trend fits poorly (R² %.2f, below %.2f)", f.r2, a.opt.MinR2)
		return
	}
	headroom, ok := a.headroom(s)
	if !ok {
		o.NoOOMReason = "the logs do not give this GPU's total memory"
		return
	}
	if over := -headroom; over > math.Max(16*mib, 0.01*math.Abs(f.endLevel)) {
		// Used memory above what the GPU holds cannot be: a figure of the
		// log is wrong (a unit, a total that is not this GPU's), and the
		// time to OOM would be "0 s".
		o.NoOOMReason = fmt.Sprintf("the used memory at the end is %.0f MiB above the GPU's capacity, which cannot be: a figure of the log is wrong (a unit, or a total that is not this GPU's)", over/mib)
		return
	}
	est := &OOMEstimate{HeadroomBytes: int64(headroom)}
	ts := f.ts
	if s.key.hasPID {
		if g, growers, logged, ok := a.gpuRate(s); ok {
			ts, est.GPUSlope, est.Growers, est.GPULogged = g, g.Slope, growers, logged
		}
	}
	if headroom > 0 {
		// The range: the slope's interval, and the uncertainty of the level
		// at the end: a line's end point has a standard error of about
		// 2σ/√n, Theil–Sen's a quarter more; 2.4 of those, plus half a MiB
		// of rounding.
		dl := 6*f.sigma/math.Sqrt(float64(f.winSamples)) + mib/2
		est.Seconds = headroom / ts.Slope
		est.LowSeconds = math.Max(0, headroom-dl) / ts.High
		est.HighSeconds = (headroom + dl) / ts.Low
	}
	window := float64(f.winEndUs-f.winStartUs) / 1e6
	if est.Seconds > a.opt.MaxExtrapolation*window {
		o.NoOOMReason = fmt.Sprintf("at this rate the GPU would run out in %s, more than %g times the %s the trend was observed",
			Duration(est.Seconds), a.opt.MaxExtrapolation, Duration(window))
		return
	}
	o.TimeToOOM = est
}

// shortTailSamples: a growing series' trend window of fewer than
// shortTailSamples times MinSamples samples, at the end of a log more than
// MaxExtrapolation times as long, gives no time to OOM (shortTail).
const shortTailSamples = 3

// shortTail says why a growing series' time to OOM is not given when its
// trend covers only a short tail of a long log: fewer than
// shortTailSamples·minSamples samples over a window that the log's time
// is more than maxExtrapolation times (a final eval's or a checkpoint's
// 45 s ramp after an hour flat). The log then shows memory that held
// still for longer than the projection would reach ahead, and the ramp
// shows memory rising now, not a rate that lasts. "" when the window is
// not such a tail.
func shortTail(s *series, minSamples int, maxExtrapolation float64) string {
	f := s.fit
	span, window := float64(s.endUs-s.startUs)/1e6, float64(f.winEndUs-f.winStartUs)/1e6
	if window*maxExtrapolation >= span || f.winSamples >= shortTailSamples*minSamples {
		return ""
	}
	return fmt.Sprintf("the growth covers only the last %s (%d of %d samples) of a %s log, too little to project (%d samples, or a %gth of the log, are needed); log for longer to see whether it goes on",
		Duration(window), f.winSamples, s.raw, Duration(span), shortTailSamples*minSamples, maxExtrapolation)
}

// gpuRateMinExcess is how much faster than a process (a share of its
// slope) its GPU's logged growth must be for the process's time to OOM to
// be taken at the GPU's rate (gpuRate). A GPU's samples and its
// processes' are not taken at one instant, and a faster rate by less
// moves the time to OOM by less than a tenth: the same growth seen twice.
const gpuRateMinExcess = 0.1

// gpuRate is the growth of a growing process's GPU, when other processes
// grow on it too: its headroom is the GPU's, which they fill together.
// From a GPU series of the group over the process's end that is growing
// (not released) faster than the process, beyond both slopes' 95%
// intervals (its low end above the process's high end) and by
// gpuRateMinExcess or more: a GPU whose samples are the process's and a
// constant rest grows at the process's rate, and its slope is above the
// process's in about half its logs, by the noise alone: its Theil–Sen
// fit (logged);
// otherwise the sum of the fits of the group's processes classed growing,
// held to the end and not released, where there are two or more (their
// intervals added: the low ends, the high ends). growers counts those
// processes. ok is false where the process's own rate is the GPU's.
func (a *Analyzer) gpuRate(s *series) (ts theilSen, growers int, logged, ok bool) {
	sum := theilSen{ok: true}
	for _, p := range a.procsIn[s.group] {
		if p.fit.class == Growing && p.out.ReleasedUs == 0 && p.out.HeldToEnd && p.fit.ts.Low > 0 {
			growers++
			sum.Slope += p.fit.ts.Slope
			sum.Low += p.fit.ts.Low
			sum.High += p.fit.ts.High
		}
	}
	for _, g := range a.gpusOf(s, s.endUs) {
		if g.fit.class == Growing && g.out.ReleasedUs == 0 && g.fit.ts.Low > 0 && g.fit.ts.Low > s.fit.ts.High &&
			g.fit.ts.Slope >= (1+gpuRateMinExcess)*s.fit.ts.Slope {
			return g.fit.ts, growers, true, true
		}
	}
	if growers < 2 {
		return theilSen{}, 0, false, false
	}
	return sum, growers, false, true
}

// headroom is the memory left at the end of a growing series: for a GPU,
// its capacity less the trend's level; for a process, what its GPU had
// left (from a GPU log of the same time, or GPUMemoryBytes less every
// logged process of that GPU).
func (a *Analyzer) headroom(s *series) (float64, bool) {
	end := s.endUs
	if !s.key.hasPID {
		if capacity, ok := s.capacityAt(end); ok {
			return capacity - s.fit.endLevel, true
		}
		if a.opt.GPUMemoryBytes > 0 {
			return float64(a.opt.GPUMemoryBytes) - s.fit.endLevel, true
		}
		return 0, false
	}
	gpus := a.gpusOf(s, end)
	for _, g := range gpus {
		if capacity, ok := g.capacityAt(end); ok {
			used, _ := g.at(end, g.tolerance())
			return capacity - used, true
		}
	}
	if a.opt.GPUMemoryBytes <= 0 {
		return 0, false
	}
	if len(gpus) > 0 {
		used, _ := gpus[0].at(end, gpus[0].tolerance())
		return float64(a.opt.GPUMemoryBytes) - used, true
	}
	sum := 0.0
	for _, p := range a.procsIn[s.group] {
		if v, ok := p.at(end, p.tolerance()); ok {
			sum += v
		}
	}
	return float64(a.opt.GPUMemoryBytes) - sum, true
}

// Duration renders seconds for people: "45 s", "12 min", "3.5 h", "2.1 days".
func Duration(sec float64) string {
	switch {
	case sec < 90:
		return fmt.Sprintf("%.0f s", sec)
	case sec < 90*60:
		return fmt.Sprintf("%.0f min", sec/60)
	case sec < 48*3600:
		return fmt.Sprintf("%.1f h", sec/3600)
	}
	return fmt.Sprintf("%.1f days", sec/86400)
}

// overTotal is a sample whose used memory exceeds the total memory of its
// GPU: n its sample number in its series (1-based), t its time (µs),
// used and total in bytes, of where total comes from.
type overTotal struct {
	n           int
	t           int64
	used, total float64
	of          string
}

// noteOver counts a sample above its GPU's total, keeping the first.
func (s *series) noteOver(o overTotal) {
	if s.overN == 0 {
		s.over = o
	}
	s.overN++
}

// leaveOut counts a sample above its GPU's total left out of the series.
func (s *series) leaveOut(o overTotal) {
	s.noteOver(o)
	s.left++
}

// checkProcessTotals finds the process series whose peak exceeds the
// total memory of their GPU, as a GPU log of the same group gives it (or
// GPUMemoryBytes): their rows carry no total of their own.
func (a *Analyzer) checkProcessTotals() {
	for g, procs := range a.procsIn {
		tot, of := -1.0, ""
		for _, gs := range a.gpusIn[g] {
			if gs.maxTotal > tot {
				tot, of = gs.maxTotal, "its GPU's total memory in "+gs.key.input
			}
		}
		if tot < 0 && a.opt.GPUMemoryBytes > 0 {
			tot, of = float64(a.opt.GPUMemoryBytes), "the GPU memory given (--gpu-memory)"
		}
		for _, p := range procs {
			if tot >= 0 && p.overN == 0 && p.peakV > tot {
				p.noteOver(overTotal{n: p.peakN, t: p.peakT, used: p.peakV, total: tot, of: of})
			}
		}
	}
}

// overTotalWarning says, naming the series and the sample (the input is
// the warning's), that a series has used memory above its GPU's total,
// and that no time to OOM is given for it; "" when none.
// renamedWarning says that a series holds rows that named its device in
// two ways (sameDevice), "" when none did.
func renamedWarning(s *series) string {
	if s.renamedBy == "" {
		return ""
	}
	k := s.key
	id := keyWords(k)
	what := "some rows give its UUID or index, others do not"
	switch {
	case k.hasPID:
		what = "some rows give its GPU's UUID or index, others do not"
	case s.gpuName != "":
		id = append(id, s.gpuName)
	}
	return fmt.Sprintf("%s: %s (a log restarted with other fields, or a placeholder in some rows); read as one series, matched by %s",
		strings.Join(id, ", "), what, s.renamedBy)
}

// keyWords names a series by its key in a warning: its pid, GPU index
// and UUID, those it has ("pid 4242", "GPU 0", "GPU-...").
func keyWords(k seriesKey) []string {
	var id []string
	if k.hasPID {
		id = append(id, fmt.Sprintf("pid %d", k.pid))
	}
	if k.hasGPU {
		id = append(id, fmt.Sprintf("GPU %d", k.gpu))
	}
	if k.uuid != "" {
		id = append(id, k.uuid)
	}
	return id
}

// hostsWarning says that a series' rows named its GPU's host in turn by
// several names (sameHostless), "" when they did not.
func hostsWarning(s *series) string {
	if len(s.otherHosts) == 0 {
		return ""
	}
	k := s.key
	id := keyWords(k)
	hosts := append([]string{k.host}, s.otherHosts...)
	rest := s.otherHostsN - len(s.otherHosts) // past the first few, the last among them
	if rest > 0 {
		hosts = append(hosts, s.lastHost)
	}
	for i, h := range hosts {
		if h == "" {
			hosts[i] = "none"
		}
	}
	named := strings.Join(hosts, ", ")
	if rest > 1 {
		// The first few and the last: the count says how many between.
		named = fmt.Sprintf("%s, then %d more, the last %s", strings.Join(hosts[:len(hosts)-1], ", "), rest-1, hosts[len(hosts)-1])
	}
	return fmt.Sprintf("%s: its rows name %d hosts in turn (%s), one after the other: read as one series by its UUID (a GPU's own); a DCGM exporter run without NODE_NAME or host networking names Hostname after its own pod, which a restart renames",
		strings.Join(id, ", "), 1+s.otherHostsN, named)
}

func overTotalWarning(s *series) string {
	if s.overN == 0 {
		return ""
	}
	name := seriesName(s)
	if !s.key.hasPID && s.key.hasGPU {
		name = fmt.Sprintf("GPU %d", s.key.gpu)
	}
	o := s.over
	more := ""
	if s.overN > 1 {
		more = fmt.Sprintf(", and so do %d more samples", s.overN-1)
	}
	what := "the series' class and peak count it; no time to OOM is given for the series"
	switch {
	case s.left > 0 && s.raw == 0:
		what = "left out: no sample of the series is left, and it is not judged"
	case s.left == 1:
		what = fmt.Sprintf("left out of the series, which is judged on its other %d", s.raw)
	case s.left > 1:
		what = fmt.Sprintf("all %d left out of the series, which is judged on its other %d", s.left, s.raw)
	}
	return fmt.Sprintf("%s: sample %d (%s) has used memory %s, more than %s (%s)%s: a damaged sample, or figures in units that do not match "+
		"(a MIG instance's against its whole GPU's); %s",
		name, o.n, time.UnixMicro(o.t).UTC().Format("2006-01-02 15:04:05 UTC"),
		humanize.IBytes(uint64(o.used)), o.of, humanize.IBytes(uint64(max(o.total, 0))), more, what)
}

// counted counts n things in English: "1 sample", "2 samples".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// podSteps reclassifies a growing series of a GPU that pods held in turn
// (DCGM exporter's labels) whose growth came only where the pod changed:
// each pod's samples within the noise band (4 times the noise, 16 MiB at
// least) of one level. That is a step at each change, not growth: the
// next job may need more, or the last may have left memory behind; the
// samples cannot tell which (SeriesTrend.StepsAtPodChanges).
func podSteps(s *series) {
	o := s.out
	if o.Class != Growing || len(s.pods) < 2 || s.podsLeft > 0 || o.OOMExits > 0 {
		return
	}
	band := max(16*mib, 4*s.fit.sigma)
	type level struct {
		first, last   int64 // times
		from, to, lvl float64
	}
	var levels []level
	for _, p := range s.pods {
		i := sort.Search(len(s.t), func(i int) bool { return s.t[i] >= p.FirstUs })
		j := sort.Search(len(s.t), func(i int) bool { return s.t[i] > p.LastUs })
		if i >= j {
			return
		}
		lo, hi := minOf(s.y[i:j]), maxOf(s.y[i:j])
		if hi-lo > band {
			return // it changed while one pod held the GPU
		}
		levels = append(levels, level{first: s.t[i], last: s.t[j-1], from: s.y[i], to: s.y[j-1], lvl: (lo + hi) / 2})
	}
	var changes []ChangePoint
	for k := 1; k < len(levels); k++ {
		if math.Abs(levels[k].lvl-levels[k-1].lvl) > band {
			changes = append(changes, ChangePoint{StartUs: levels[k-1].last, EndUs: levels[k].first,
				FromBytes: int64(levels[k-1].to), ToBytes: int64(levels[k].from)})
		}
	}
	if len(changes) == 0 {
		return
	}
	s.fit.class = Step
	o.Class, o.ChangePoints, o.StepsAtPodChanges = Step, changes, true
	o.RisingFloor, o.StepAtEnd, o.TailSlope = false, false, 0
}
