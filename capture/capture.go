// Package capture samples GPU memory live through NVML and writes the
// samples as a pynvml-style JSON lines log that gpuleak's NVML reader
// (package parse/nvml, layout nvml.FormatPynvmlJSONL) reads back into the
// same samples table as any other NVML log.
//
// NVML is reached through github.com/NVIDIA/go-nvml, which needs cgo and
// loads libnvidia-ml.so.1 (shipped with the NVIDIA driver) at run time. It
// is built in only with the build tag "nvml" (make build-nvml, or go build
// -tags nvml); the default build is cgo-free and Open returns ErrNotBuiltIn.
//
// # Record format (one JSON object per GPU per tick)
//
//	{"ts": "2026-12-01T02:05:54.123456Z",   UTC, microseconds
//	 "host": "node1", "gpu": 0, "uuid": "GPU-...", "name": "NVIDIA H200",
//	 "memory_info": "v2",                   "v2" or "v1" (see below)
//	 "total": 150754820096, "reserved": 644939776, "used": 4194304, "free": 150105686016,
//	 "processes": [{"pid": 469, "name": "python3", "type": "compute", "used": 679477248}]}
//
// Sizes are bytes. With NVML's memory info v2 (nvmlDeviceGetMemoryInfo_v2),
// "used" leaves out the driver's "reserved" memory, and total = reserved +
// used + free. Where v2 is not supported (older drivers, some vGPUs) v1 is
// used: "used" then counts the reservation and "reserved" is absent. A
// process's "used" is NVML's usedGpuMemory, null when NVML cannot say
// (NVML_VALUE_NOT_AVAILABLE: Windows WDDM, MIG without privileges); "type"
// is "compute", "graphics" or "compute+graphics".
package capture

import (
	"errors"
	"time"
)

// Process is one process using a GPU, as NVML lists it.
type Process struct {
	PID int64
	// Name is the process's name (NVML's, else /proc/PID/comm); empty
	// when neither is known (the process has exited).
	Name string
	// UsedBytes is NVML's usedGpuMemory; HasUsed is false when NVML
	// reports it as not available.
	UsedBytes int64
	HasUsed   bool
	// Type is "compute", "graphics" or "compute+graphics".
	Type string
}

// GPUSample is one GPU's memory at one instant. Sizes are bytes.
type GPUSample struct {
	TimeUs int64 // microseconds since the Unix epoch, UTC
	Host   string
	Index  int // NVML index
	UUID   string
	Name   string
	// MemoryInfo is 2 when the sizes come from nvmlDeviceGetMemoryInfo_v2
	// (UsedBytes excludes ReservedBytes), 1 for the v1 call (UsedBytes
	// includes the reservation; ReservedBytes unknown).
	MemoryInfo                       int
	TotalBytes, UsedBytes, FreeBytes int64
	ReservedBytes                    int64
	Processes                        []Process
}

// Source takes samples. Sample appends one GPUSample per selected GPU,
// all taken at one tick, to dst and returns it; an error means no sample
// of this tick can be trusted. Close releases the source (nvmlShutdown).
type Source interface {
	Sample(dst []GPUSample) ([]GPUSample, error)
	Close() error
}

// Config selects what a Source samples.
type Config struct {
	// GPUs are NVML indices; empty means every GPU.
	GPUs []int
	// Host is written in every sample; empty: os.Hostname.
	Host string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// ErrNotBuiltIn is returned by Open in a build without NVML.
var ErrNotBuiltIn = errors.New("this gpuleak was built without NVML live capture: build it with `make build-nvml` (go build -tags nvml; needs cgo and a C compiler; the NVIDIA driver's libnvidia-ml.so.1 is loaded at run time)")

// ErrNoLibrary is returned by Open when libnvidia-ml.so.1 cannot be loaded.
var ErrNoLibrary = errors.New("NVML library not found: libnvidia-ml.so.1 could not be loaded; it comes with the NVIDIA driver (Debian/Ubuntu: libnvidia-ml1 or nvidia-utils-<version>; RHEL: nvidia-driver-NVML; in a container, run it with the NVIDIA container toolkit, e.g. docker --gpus all)")
