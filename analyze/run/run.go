package run

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

// One picture of a run: nvidia-smi sees all the memory a process holds on
// a GPU; PyTorch's snapshot sees only its caching allocator's segments.
// What the process holds beyond PyTorch's reserved memory is outside the
// caching allocator: the CUDA context, cuBLAS/cuDNN workspaces, NCCL
// buffers, and native extensions that call cudaMalloc themselves. When the
// process grows while PyTorch's reserved memory stays flat, the leak is
// there.

// ReservedCollector follows a snapshot's reserved memory over time, per
// device: the segments at the end, and the trace's segment_alloc,
// segment_free, segment_map and segment_unmap entries before it. Feed it
// the snapshot's batches (Add), as to the LeakAnalyzer.
type ReservedCollector struct {
	devs  map[int32]*reservedDev
	signs []int8 // each row's change of reserved memory: 1, -1 or 0 (Add)
}

type reservedDev struct {
	end     int64 // bytes reserved at the end (segments' total_size)
	seen    bool  // segments were read
	changes []reservedChange
	first   int64 // first and last trace time (µs), 0 without
	last    int64
	timed   bool
}

type reservedChange struct {
	t     int64 // µs
	delta int64 // bytes
}

// maxReservedChanges bounds the segment entries kept per device.
const maxReservedChanges = 1 << 20

// NewReservedCollector returns an empty collector.
func NewReservedCollector() *ReservedCollector {
	return &ReservedCollector{devs: map[int32]*reservedDev{}}
}

func (c *ReservedCollector) dev(d int32) *reservedDev {
	r, ok := c.devs[d]
	if !ok {
		r = &reservedDev{}
		c.devs[d] = r
	}
	return r
}

// Add reads one batch of a snapshot (segments and events tables; others
// are ignored).
func (c *ReservedCollector) Add(t pytorch.Table, rec arrow.RecordBatch) {
	switch t {
	case pytorch.TableSegments:
		dev := rec.Column(pytorch.SegDevice).(*array.Int32)
		total := rec.Column(pytorch.SegTotalSize).(*array.Int64)
		for i := 0; i < int(rec.NumRows()); i++ {
			d := c.dev(dev.Value(i))
			d.end = satAdd(d.end, total.Value(i))
			d.seen = true
		}
	case pytorch.TableEvents:
		dev := rec.Column(pytorch.EvDevice).(*array.Int32)
		tm := rec.Column(pytorch.EvTimeUs).(*array.Int64)
		action := rec.Column(pytorch.EvAction).(*array.Dictionary)
		dict := action.Dictionary().(*array.String)
		size := rec.Column(pytorch.EvSize).(*array.Int64)
		// The sign of each action's change of reserved memory, by row.
		signs := make([]int8, dict.Len())
		for k := range signs {
			switch dict.Value(k) {
			case pytorch.ActionSegmentAlloc, pytorch.ActionSegmentMap:
				signs[k] = 1
			case pytorch.ActionSegmentFree, pytorch.ActionSegmentUnmap:
				signs[k] = -1
			}
		}
		c.signs = parse.DictRowCodes(action, signs, c.signs)
		for i := 0; i < int(rec.NumRows()); i++ {
			d := c.dev(dev.Value(i))
			if !tm.IsValid(i) {
				continue
			}
			t := tm.Value(i)
			if !d.timed || t < d.first {
				d.first = t
			}
			d.last = max(d.last, t)
			d.timed = true
			sign := int64(c.signs[i])
			if sign == 0 {
				continue
			}
			if len(d.changes) < maxReservedChanges {
				d.changes = append(d.changes, reservedChange{t: t, delta: sign * size.Value(i)})
			}
		}
	}
}

// ReservedSeries is one device's reserved memory over a snapshot's trace.
type ReservedSeries struct {
	Device int
	// EndBytes is what the segments hold at the end; StartUs and EndUs
	// bound the trace (µs since the epoch), both 0 without timestamps.
	EndBytes       int64
	StartUs, EndUs int64
	changes        []reservedChange // in time order
}

// At returns the bytes reserved at time t (µs): the end's, less what the
// trace's segment entries after t added.
func (s *ReservedSeries) At(t int64) int64 {
	v := s.EndBytes
	for i := len(s.changes) - 1; i >= 0 && s.changes[i].t > t; i-- {
		v -= s.changes[i].delta
	}
	return v
}

// Series returns each device's reserved memory, by device.
func (c *ReservedCollector) Series() []ReservedSeries {
	var out []ReservedSeries
	for dv, d := range c.devs {
		if !d.seen {
			continue
		}
		ch := append([]reservedChange(nil), d.changes...)
		sort.SliceStable(ch, func(i, j int) bool { return ch[i].t < ch[j].t })
		out = append(out, ReservedSeries{Device: int(dv), EndBytes: d.end, StartUs: d.first, EndUs: d.last, changes: ch})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}

// NonPyTorch is memory a process holds outside PyTorch's caching
// allocator: NVML's used memory of the process less PyTorch's reserved.
type NonPyTorch struct {
	Device int
	PID    int64
	// Process is the process name NVML gives.
	Process string
	// AtUs is the NVML sample compared with the snapshot's end; UsedBytes
	// NVML's used memory then, ReservedBytes PyTorch's, GapBytes the
	// difference.
	AtUs                               int64
	UsedBytes, ReservedBytes, GapBytes int64
	// Over the window both cover ([FromUs, ToUs]), the process grew by
	// UsedGrowth and PyTorch's reserved memory by ReservedGrowth;
	// GapGrowth = UsedGrowth - ReservedGrowth, GapPerSecond its rate.
	FromUs, ToUs                          int64
	UsedGrowth, ReservedGrowth, GapGrowth int64
	GapPerSecond                          float64
	Grows                                 bool
	// Joined says how the two were matched; Limits what could not be checked.
	Joined string
	Limits []string
}

// ProcessSamples is one process's NVML used memory over time.
type ProcessSamples struct {
	Source  string // the log's path
	PID     int64
	Process string
	GPU     int32
	HasGPU  bool
	TimesUs []int64
	Bytes   []int64
}

// valueAt returns the last sample at or before t, or the first after it.
func (p *ProcessSamples) valueAt(t int64) (int64, int64) {
	i := sort.Search(len(p.TimesUs), func(i int) bool { return p.TimesUs[i] > t })
	if i == 0 {
		return p.TimesUs[0], p.Bytes[0]
	}
	return p.TimesUs[i-1], p.Bytes[i-1]
}

// minGapGrowth is the least growth outside PyTorch called growing.
const minGapGrowth = 64 << 20

// Join matches a snapshot's reserved memory (one device) with the NVML
// processes whose samples cover its trace's time window. It returns the
// comparison when exactly one process matches, and otherwise why none
// could be joined.
func Join(snap ReservedSeries, snapPath string, procs []ProcessSamples) (*NonPyTorch, string) {
	if snap.StartUs == 0 && snap.EndUs == 0 {
		return nil, fmt.Sprintf("%s has no timestamps in its trace: it cannot be matched in time with an NVML log", snapPath)
	}
	var cands []*ProcessSamples
	var limits []string
	for i := range procs {
		p := &procs[i]
		if len(p.TimesUs) == 0 {
			continue
		}
		if p.HasGPU && int(p.GPU) != snap.Device {
			continue
		}
		if p.TimesUs[0] > snap.EndUs || p.TimesUs[len(p.TimesUs)-1] < snap.StartUs {
			continue
		}
		cands = append(cands, p)
	}
	switch {
	case len(cands) == 0:
		return nil, fmt.Sprintf("no process of the NVML logs has samples during the trace of %s (device %d, %s to %s): if the logs' times are local, give their zone with --tz", snapPath, snap.Device, fmtUs(snap.StartUs), fmtUs(snap.EndUs))
	case len(cands) > 1:
		s := ""
		for _, p := range cands {
			s += fmt.Sprintf(" %d", p.PID)
		}
		return nil, fmt.Sprintf("several processes of the NVML logs ran during the trace of %s (pids%s): the snapshot does not say which is its own", snapPath, s)
	}
	p := cands[0]
	if !p.HasGPU {
		limits = append(limits, "the apps log names GPUs by UUID only, so the device was not checked (give the --query-gpu log of the same run to map UUIDs to indices)")
	}
	res := &NonPyTorch{Device: snap.Device, PID: p.PID, Process: p.Process}
	at, used := p.valueAt(snap.EndUs)
	res.AtUs, res.UsedBytes = at, used
	res.ReservedBytes = snap.At(at)
	res.GapBytes = used - res.ReservedBytes
	if d := snap.EndUs - at; d > 5_000_000 || d < -5_000_000 {
		limits = append(limits, fmt.Sprintf("the NVML sample nearest the snapshot's end is %.1f s away from it", float64(d)/1e6))
	}
	from := max(snap.StartUs, p.TimesUs[0])
	to := min(snap.EndUs, p.TimesUs[len(p.TimesUs)-1])
	// Both growths over the same instants: the first and last samples
	// inside the window, where the process's memory is known (between
	// samples it is not: the reserved memory at the trace's end beside
	// the sample before it counted growth the samples never saw).
	i0 := sort.Search(len(p.TimesUs), func(i int) bool { return p.TimesUs[i] >= from })
	i1 := sort.Search(len(p.TimesUs), func(i int) bool { return p.TimesUs[i] > to }) - 1
	if i0 < i1 {
		from, to = p.TimesUs[i0], p.TimesUs[i1]
	}
	res.FromUs, res.ToUs = from, to
	_, u0 := p.valueAt(from)
	_, u1 := p.valueAt(to)
	res.UsedGrowth = u1 - u0
	res.ReservedGrowth = snap.At(to) - snap.At(from)
	res.GapGrowth = res.UsedGrowth - res.ReservedGrowth
	if to > from {
		res.GapPerSecond = float64(res.GapGrowth) / (float64(to-from) / 1e6)
	}
	res.Grows = res.GapGrowth >= minGapGrowth && 2*res.ReservedGrowth < res.UsedGrowth
	res.Joined = fmt.Sprintf("%s (device %d, trace %s to %s) joined with pid %d (%s) of %s by time: the only process sampled during the trace",
		snapPath, snap.Device, fmtUs(snap.StartUs), fmtUs(snap.EndUs), p.PID, p.Process, p.Source)
	res.Limits = limits
	return res, ""
}

func fmtUs(us int64) string {
	return fmt.Sprintf("%s UTC", time.UnixMicro(us).UTC().Format("2006-01-02 15:04:05.000"))
}

// ProcessCollector keeps the per-process samples of NVML logs (rows of
// parse/nvml's samples table with a pid), and the GPU index of each UUID
// from rows that give both, to place processes of --query-compute-apps
// logs (which name GPUs by UUID only) on a device.
type ProcessCollector struct {
	procs   map[procKey]*ProcessSamples
	order   []procKey
	uuidGPU map[string]int32
	dropped int64
	kept    int64 // samples kept, over all processes
}

type procKey struct {
	source string
	pid    int64
	uuid   string
	gpu    int32
}

// maxProcessSamples bounds the samples kept per process, maxSamples
// those of all processes together (16 bytes each: 64 MiB), and
// maxProcesses the processes.
const (
	maxProcessSamples = 1 << 20
	maxSamples        = 1 << 22
	maxProcesses      = 1 << 12
)

// NewProcessCollector returns an empty collector.
func NewProcessCollector() *ProcessCollector {
	return &ProcessCollector{procs: map[procKey]*ProcessSamples{}, uuidGPU: map[string]int32{}}
}

// Add reads one batch of parse/nvml's samples table from the log source.
func (c *ProcessCollector) Add(source string, rec arrow.RecordBatch) {
	tm := rec.Column(nvml.ColTime).(*array.Timestamp)
	gpu := rec.Column(nvml.ColGPU).(*array.Int32)
	uuid := rec.Column(nvml.ColUUID).(*array.Dictionary)
	ud := uuid.Dictionary().(*array.String)
	pid := rec.Column(nvml.ColPID).(*array.Int64)
	proc := rec.Column(nvml.ColProcess).(*array.Dictionary)
	pd := proc.Dictionary().(*array.String)
	used := rec.Column(nvml.ColUsed).(*array.Int64)
	// A UUID's GPU is taken from its first row with an index: once a
	// dictionary entry has been looked up, its later rows in the batch
	// change nothing (the map holds the UUID, or was full and still is),
	// so each entry is looked up once a batch, not each row (a --query-gpu
	// log's rows all name a UUID). The dictionary spans the whole log:
	// when it outgrows the batch (a log of ever new UUIDs), rows are
	// looked up one by one, so that a batch costs its rows, not the
	// dictionary.
	var uuidDone []bool
	if ud.Len() <= int(rec.NumRows()) {
		uuidDone = make([]bool, ud.Len())
	}
	uuidIx, _ := uuid.Indices().(*array.Int32) // the schema's index type; GetValueIndex switches on it each row
	for i := 0; i < int(rec.NumRows()); i++ {
		j := -1 // the row's UUID entry
		if uuid.IsValid(i) {
			if uuidIx != nil {
				j = int(uuidIx.Value(i))
			} else {
				j = uuid.GetValueIndex(i)
			}
		}
		if j >= 0 && (uuidDone == nil || !uuidDone[j]) && gpu.IsValid(i) {
			if uuidDone != nil {
				uuidDone[j] = true // (an empty UUID maps nothing, now or later)
			}
			if u := ud.Value(j); u != "" {
				if _, ok := c.uuidGPU[u]; !ok && len(c.uuidGPU) < maxProcesses {
					c.uuidGPU[strings.Clone(u)] = gpu.Value(i)
				}
			}
		}
		if !pid.IsValid(i) || !used.IsValid(i) {
			continue
		}
		var u string
		if j >= 0 {
			u = ud.Value(j)
		}
		k := procKey{source: source, pid: pid.Value(i), uuid: u, gpu: -1}
		if gpu.IsValid(i) {
			k.gpu = gpu.Value(i)
		}
		p, ok := c.procs[k]
		if !ok {
			if len(c.procs) >= maxProcesses {
				c.dropped++
				continue
			}
			k.uuid = strings.Clone(k.uuid)
			p = &ProcessSamples{Source: source, PID: k.pid, GPU: k.gpu, HasGPU: k.gpu >= 0}
			if proc.IsValid(i) {
				p.Process = strings.Clone(pd.Value(proc.GetValueIndex(i)))
			}
			c.procs[k] = p
			c.order = append(c.order, k)
		}
		if len(p.TimesUs) >= maxProcessSamples || c.kept >= maxSamples {
			c.dropped++
			continue
		}
		c.kept++
		p.TimesUs = append(p.TimesUs, int64(tm.Value(i)))
		p.Bytes = append(p.Bytes, used.Value(i))
	}
}

// Processes returns every process's samples in time order, placed on a
// GPU index where a log maps its UUID to one.
func (c *ProcessCollector) Processes() []ProcessSamples {
	out := make([]ProcessSamples, 0, len(c.order))
	for _, k := range c.order {
		p := *c.procs[k]
		if !p.HasGPU {
			if g, ok := c.uuidGPU[k.uuid]; ok {
				p.GPU, p.HasGPU = g, true
			}
		}
		idx := make([]int, len(p.TimesUs))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return p.TimesUs[idx[a]] < p.TimesUs[idx[b]] })
		ts, bs := make([]int64, len(idx)), make([]int64, len(idx))
		for j, i := range idx {
			ts[j], bs[j] = p.TimesUs[i], p.Bytes[i]
		}
		p.TimesUs, p.Bytes = ts, bs
		out = append(out, p)
	}
	return out
}

// satAdd is a+b for sizes that are not negative, held at math.MaxInt64
// rather than wrapping when a hostile input's sizes overflow.
func satAdd(a, b int64) int64 {
	if c := a + b; c >= a {
		return c
	}
	return math.MaxInt64
}
