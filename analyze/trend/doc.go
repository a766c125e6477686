// Package trend finds growth in NVML memory samples (parse/nvml tables:
// nvidia-smi, dmon/pmon, pynvml, gpustat, DCGM): an Analyzer fits each
// GPU's and process's series, classes it (Class: growing, step, sawtooth,
// flat), splits it into runs, and estimates when a growing one runs out
// of memory. Sizes are bytes, times microseconds since the Unix epoch. No
// I/O.
package trend
