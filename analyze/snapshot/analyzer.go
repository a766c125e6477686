package snapshot

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

// Analyzer runs the leak and fragmentation analyses of a snapshot
// in one pass and puts together what its "oom" trace entries need: the
// memory at each OOM and the call sites that held it. Feed it every record
// batch of a snapshot with Add, then call Finalize once.
type Analyzer struct {
	leak *LeakAnalyzer
	frag *FragmentAnalyzer
}

// Result is the analysis of one snapshot.
type Result struct {
	// Leak and Fragment are the two analyses' results.
	Leak     *LeakResult
	Fragment *FragmentResult
	// OOMs are the snapshot's "oom" trace entries, in trace order per
	// device, devices in order.
	OOMs []OOM
}

// OOM is one "oom" trace entry with the allocator's state and the
// call sites holding memory at that moment.
type OOM struct {
	OOMState
	// Sites hold the memory allocated at the OOM, classified as at the end
	// of a run whose trace stops at the OOM: a "leak" site grew up to it.
	// Ranked like LeakResult.Sites. Nil when SitesKnown is false.
	Sites []Site
	// SitesKnown is false past the first 32 OOMs of a device, whose live
	// sets are not kept.
	SitesKnown bool
	// Stack is the failing allocation's stack with framework frames
	// hidden, innermost first; Frame its innermost user frame.
	Stack []callsite.Frame
	Frame callsite.Frame
	// SmallerFrame names After.Smaller's stack (its innermost user
	// frame), zero when none.
	SmallerFrame callsite.Frame
}

// NewAnalyzer returns an analyzer whose leak analysis uses opt.
func NewAnalyzer(opt LeakOptions) *Analyzer {
	return &Analyzer{leak: NewLeakAnalyzer(opt), frag: NewFragmentAnalyzer()}
}

// Add feeds one record batch of table t to both analyses.
func (a *Analyzer) Add(t pytorch.Table, rec arrow.RecordBatch) error {
	if err := a.leak.Add(t, rec); err != nil {
		return err
	}
	return a.frag.Add(t, rec)
}

// Finalize ends the analysis. The analyzer must not be used afterwards.
// Without an "oom" trace entry the two analyses share nothing, and finish
// on two goroutines: on a snapshot of many segments each takes tens of
// milliseconds, after the decoding, which has the other core no more.
func (a *Analyzer) Finalize() *Result {
	if !a.frag.sawOOM() {
		res := &Result{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			res.Fragment = a.frag.Finalize()
		}()
		res.Leak = a.leak.Finalize()
		<-done
		return res
	}
	fr := a.frag.Finalize()
	res := &Result{Fragment: fr}
	groupOf := map[int32]string{}
	for _, o := range fr.OOMs {
		so := OOM{OOMState: o}
		so.Stack = a.leak.userStack(o.Stack)
		if i := callsite.InnermostUser(so.Stack); i >= 0 {
			so.Frame = so.Stack[i]
		}
		so.Sites, so.SitesKnown = a.leak.sitesAtOOM(int32(o.Device), o.Seq, o.Memory.Blocks, groupOf)
		if o.After.Smaller.Stack >= 0 {
			st := a.leak.userStack(o.After.Smaller.Stack)
			if i := callsite.InnermostUser(st); i >= 0 {
				so.SmallerFrame = st[i]
			}
		}
		res.OOMs = append(res.OOMs, so)
	}
	res.Leak = a.leak.Finalize()
	return res
}

// sitesAtOOM groups the blocks allocated at the OOM at trace position seq
// of device dev (the state FragmentAnalyzer rebuilt) by call site, dated
// by the trace's live allocations at that moment. It returns false when
// the live set of that OOM was not kept.
func (a *LeakAnalyzer) sitesAtOOM(dev int32, seq int64, blocks []StateBlock, groupOf map[int32]string) ([]Site, bool) {
	d := a.devs[dev]
	if d == nil {
		return nil, false
	}
	var c *oomCapture
	for i := range d.oomLive {
		if d.oomLive[i].seq == seq {
			c = &d.oomLive[i]
		}
	}
	if c == nil {
		return nil, false
	}
	in := siteSet{dev: dev, haveBlocks: d.sawSegments, live: &c.live, allocs: c.allocs, timed: d.hasTime, winEnd: c.clock, lastSeq: c.seq, d: d}
	in.iter = a.findIterations(d, c.logLen, d.hasTime)
	if d.hasTime {
		in.winStart = d.firstUs
	}
	in.blocks = &rowList[blockInfo]{}
	for _, b := range blocks {
		stack := b.Stack
		if l, ok := c.live.get(b.Addr); ok {
			stack = allocStack(l.stack, b.Stack)
		}
		in.blocks.add(blockInfo{addr: b.Addr, size: b.Size, stack: stack})
	}
	sites, _ := a.groupSites(in, groupOf)
	rankSites(sites)
	return sites, true
}
