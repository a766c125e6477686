// Package profiler analyses what torch.profiler writes: a Kineto
// (Chrome) trace's [memory] events, given the stacks of their enclosing
// spans and fed to analyze/snapshot's leak analysis (kineto.go), and
// export_memory_timeline's per-category series (timeline.go). Sizes are
// bytes, times microseconds. No I/O.
package profiler
