// Package oom explains a CUDA out-of-memory error: TextAnalyzer reads the
// error messages, allocator stats and memory_summary() tables of a log
// (parse/pytorchtext tables; text.go), and NewPostmortem joins them with a
// snapshot written at the OOM (analyze/snapshot) and NVML samples into a
// Report: what was asked for, what was free, where the memory was and
// which Cause it was (oom.go). Sizes are bytes. No I/O.
package oom
