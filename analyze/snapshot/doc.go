// Package snapshot analyses a PyTorch CUDA memory snapshot (the segments,
// blocks and allocation trace of torch.cuda.memory._snapshot, as Arrow
// tables from parse/pytorch): LeakAnalyzer ranks the call sites that hold
// memory at the end and tells a leak from retained memory across the
// trace's iterations (leak.go, iterations.go); FragmentAnalyzer replays
// the caching allocator's segments and pools to the end or to an
// out-of-memory entry (fragment.go); Analyzer runs both in one pass
// (analyzer.go). Sizes are bytes, times microseconds since the Unix epoch.
// No I/O.
package snapshot
