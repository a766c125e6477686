// Package run joins the artifacts of one run: a PyTorch snapshot's
// reserved memory over time (ReservedCollector) and NVML's per-process
// memory samples (ProcessCollector), to tell what the process holds
// outside PyTorch's caching allocator (Join). Sizes are bytes, times
// microseconds since the Unix epoch. No I/O.
package run
