package pipeline

import (
	"runtime"
	"runtime/debug"
	"sync"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	anrun "github.com/gpuleak/gpuleak/analyze/run"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pytorch"
	"github.com/gpuleak/gpuleak/report"
)

// The PyTorch CUDA memory snapshot family: torch.cuda.memory._dump_snapshot()
// pickles, recognised by their pickle protocol header.
func init() {
	register(&family{
		name:       "pytorch-snapshot",
		order:      10,
		formats:    []parse.Format{pytorch.FormatSnapshot},
		sniff:      sniffAs(pytorch.FormatSnapshot, pytorch.Sniff),
		analyze:    analyzeSnapshot,
		postmortem: postmortemSnapshot,
		tables: func(_ *Options, in *parse.Input, _ parse.Format, emit Emit) error {
			r := pytorch.NewReader(in.Reader(), in.Name)
			return drain(r, func() string { return "snapshot_" + r.Table().String() }, emit)
		},
		trend: func(_ *runner, in *parse.Input, _ parse.Format) (report.TrendInput, error) {
			return report.TrendInput{}, &parse.Error{File: in.Name, Offset: 0, Err: parse.ErrNotMine,
				Msg: "a PyTorch memory snapshot, not an NVML sample log: use gpuleak analyze"}
		},
	})
}

// analyzeSnapshot streams a snapshot through the leak and fragmentation
// analyses; what it says about OOMs goes to the run's OOM facts, its
// reserved memory over time to the join with NVML processes.
func analyzeSnapshot(r *runner, in *parse.Input, _ []byte, format parse.Format) (report.Input, []report.Finding, error) {
	// Batches are released as soon as they are analysed: their buffers
	// serve the next ones.
	mem := parse.NewRecyclingAllocator(64 << 20)
	popts := []pytorch.Option{pytorch.WithAllocator(mem)}
	if in.Regular {
		// A regular file's reads end: inflate it on another core.
		popts = append(popts, pytorch.WithReadAhead())
	}
	pr := pytorch.NewReader(in.Reader(), in.Name, popts...)
	defer pr.Release()
	src, stop := readAhead[pytorch.Table](in, pr)
	defer stop() // before pr.Release
	a := snapshot.NewAnalyzer(r.leakOptions())
	reserved := anrun.NewReservedCollector()
	for src.Next() {
		if err := a.Add(src.Table(), src.RecordBatch()); err != nil {
			return report.Input{}, nil, err
		}
		reserved.Add(src.Table(), src.RecordBatch())
	}
	if err := src.Err(); err != nil {
		return report.Input{}, nil, err
	}
	warnings := pr.Metadata().Warnings.Strings()
	defer freeDecoder(in, stop, pr, mem)()
	res := a.Finalize()
	r.join.addSnapshot(in.Name, reserved.Series())
	r.oom.add(anoom.Input{Path: in.Name, Format: string(format), Snapshot: res})
	rin, fs := report.FromLeaks(in.Name, string(format), append(warnings, res.Fragment.Warnings...), res.Leak)
	return rin, fs, nil
}

// postmortemSnapshot reads a snapshot for gpuleak oom: each OOM of its
// trace, and its pools at the end.
func postmortemSnapshot(r *runner, in *parse.Input, _ []byte, format parse.Format) (report.Input, anoom.Input, error) {
	mem := parse.NewRecyclingAllocator(64 << 20)
	pr := pytorch.NewReader(in.Reader(), in.Name, pytorch.WithAllocator(mem))
	defer pr.Release()
	a := snapshot.NewAnalyzer(r.leakOptions())
	for pr.Next() {
		if err := a.Add(pr.Table(), pr.RecordBatch()); err != nil {
			return report.Input{}, anoom.Input{}, err
		}
	}
	if err := pr.Err(); err != nil {
		return report.Input{}, anoom.Input{}, err
	}
	warnings := pr.Metadata().Warnings.Strings()
	defer freeDecoder(in, func() {}, pr, mem)()
	res := a.Finalize()
	rin, _ := report.FromLeaks(in.Name, string(format), append(warnings, res.Fragment.Warnings...), res.Leak)
	report.AddEndPools(&rin, res.Fragment)
	return rin, anoom.Input{Path: in.Name, Format: string(format), Snapshot: res}, nil
}

// freeDecoder ends reading a snapshot before its analysis's last pass: it
// stops the prefetch, releases the reader (its memo index, read-ahead
// chunks and interned stacks), empties the batch buffers' pool and
// collects, so that Finalize's working memory (on big_real 5 MiB) reuses
// theirs instead of raising the peak. The deferred stop and Release that
// follow do nothing.
//
// With the decoder's memory gone the collector's goal would fall to twice
// the small live heap, and Finalize, which allocates as it replays, would
// run more cycles than before (on the scaler's 10M-entry snapshot 12
// instead of 10, +0.2 CPU-s). So until the returned function is called the
// goal is kept where decoding had taken it (keepHeapGoal): the heap may
// grow back to that, no further.
//
// For a small input (smallInput) the collection is skipped: its heap is a
// few MiB beside the process's floor (about 25 MB resident), a forced
// cycle cannot lower the peak, and on the field's small snapshots, where
// start-up is most of the time, it cost about half a millisecond.
//
// The goal and the live heap are read with runtime.ReadMemStats (NextGC,
// and HeapAlloc right after runtime.GC, which sweeps every span before it
// returns, so that only the marked objects are counted), not with
// runtime/metrics, whose package initialisation formats a description of
// every GODEBUG setting at each start (about 1 M instructions, an eighth
// of `gpuleak --version`'s).
func freeDecoder(in *parse.Input, stop func(), pr *pytorch.Reader, mem *parse.RecyclingAllocator) (restore func()) {
	small := smallInput(in)
	var ms runtime.MemStats
	if !small {
		runtime.ReadMemStats(&ms) // stops the world: not for a small run
	}
	goal := ms.NextGC
	stop()
	pr.Release()
	mem.Purge()
	if small {
		return func() {}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return keepHeapGoal(goal, ms.HeapAlloc)
}

// smallInput reports whether in is a regular, uncompressed file of
// smallRunBytes or less.
func smallInput(in *parse.Input) bool {
	return in.Regular && !in.Gzip && in.Size >= 0 && in.Size <= smallRunBytes
}

// gcKeep counts the analyses that hold a raised GC percentage, and keeps
// the one to restore when the last ends: snapshots may be analysed on
// several goroutines at once, and the percentage is the process's.
var gcKeep struct {
	sync.Mutex
	holders int
	percent int // in force while holders > 0
	orig    int // to restore when holders falls to 0
}

// keepHeapGoal sets the GC percentage so that, with live bytes live, the
// next goal is goal bytes (never below the percentage in force: GOGC or an
// earlier holder's), until the returned function is called. With the
// collector off (GOGC=off), or a goal not above twice live, it does
// nothing.
func keepHeapGoal(goal, live uint64) (restore func()) {
	if live == 0 || goal <= 2*live {
		return func() {}
	}
	want := int(min(100*(goal-live)/live, 1<<20))
	gcKeep.Lock()
	defer gcKeep.Unlock()
	if gcKeep.holders == 0 {
		cur := debug.SetGCPercent(-1)
		debug.SetGCPercent(cur)
		if cur < 0 {
			return func() {}
		}
		gcKeep.orig, gcKeep.percent = cur, cur
	}
	if want > gcKeep.percent {
		gcKeep.percent = want
		debug.SetGCPercent(want)
	}
	gcKeep.holders++
	var once sync.Once
	return func() {
		once.Do(func() {
			gcKeep.Lock()
			defer gcKeep.Unlock()
			if gcKeep.holders--; gcKeep.holders == 0 {
				debug.SetGCPercent(gcKeep.orig)
			}
		})
	}
}
