package pipeline

import (
	"runtime"

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
	freeDecoder(stop, pr, mem)
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
	freeDecoder(func() {}, pr, mem)
	res := a.Finalize()
	rin, _ := report.FromLeaks(in.Name, string(format), append(warnings, res.Fragment.Warnings...), res.Leak)
	report.AddEndPools(&rin, res.Fragment)
	return rin, anoom.Input{Path: in.Name, Format: string(format), Snapshot: res}, nil
}

// freeDecoder ends reading a snapshot before its analysis's last pass: it
// stops the prefetch, releases the reader (its memo index, read-ahead
// chunks and interned stacks) and empties the batch buffers' pool, so that
// Finalize's working memory (on big_real 5 MiB) reuses theirs instead of
// raising the peak. The deferred stop and Release that follow do nothing.
func freeDecoder(stop func(), pr *pytorch.Reader, mem *parse.RecyclingAllocator) {
	stop()
	pr.Release()
	mem.Purge()
	runtime.GC()
}
