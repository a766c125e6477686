//go:build nvml

package capture

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// BuiltIn says whether NVML live capture is built in.
const BuiltIn = true

// Open initialises NVML (nvmlInit, loading libnvidia-ml.so.1) and returns
// a Source over the GPUs cfg selects. Errors: ErrNoLibrary when the library
// is missing; any other NVML failure (no driver loaded, no permission, an
// index beyond the GPUs present) names the call that failed.
func Open(cfg Config) (Source, error) {
	return openNVML(nvml.New(), cfg)
}

// nvmlSource samples through an nvml.Interface (the real library, or
// go-nvml's mock in tests).
type nvmlSource struct {
	lib     nvml.Interface
	cfg     Config
	devs    []nvmlDevice
	names   map[int64]string // process names by pid, for pids still seen
	seen    map[int64]bool
	procBuf map[int64]int
}

type nvmlDevice struct {
	index      int
	dev        nvml.Device
	uuid, name string
	v1         bool // memory info v2 is not supported: use v1
	noGraphics bool // graphics processes are not supported
}

func openNVML(lib nvml.Interface, cfg Config) (*nvmlSource, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, ErrNoLibrary
		}
		return nil, fmt.Errorf("nvmlInit: %v", nvmlError(ret))
	}
	s := &nvmlSource{lib: lib, cfg: cfg, names: map[int64]string{}, seen: map[int64]bool{}, procBuf: map[int64]int{}}
	if s.cfg.Now == nil {
		s.cfg.Now = time.Now
	}
	if s.cfg.Host == "" {
		s.cfg.Host, _ = os.Hostname()
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("nvmlDeviceGetCount: %v", nvmlError(ret))
	}
	idx := cfg.GPUs
	if len(idx) == 0 {
		for i := range n {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		lib.Shutdown()
		return nil, errors.New("NVML found no GPU")
	}
	for _, i := range idx {
		if i < 0 || i >= n {
			lib.Shutdown()
			if n == 1 {
				return nil, fmt.Errorf("no GPU %d: NVML sees one GPU, index 0", i)
			}
			return nil, fmt.Errorf("no GPU %d: NVML sees %d GPUs, indices 0 to %d", i, n, n-1)
		}
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("nvmlDeviceGetHandleByIndex(%d): %v", i, nvmlError(ret))
		}
		d := nvmlDevice{index: i, dev: dev}
		// UUID and name do not change while the driver runs; a GPU that
		// cannot tell is still sampled, by index.
		if u, ret := dev.GetUUID(); ret == nvml.SUCCESS {
			d.uuid = u
		}
		if nm, ret := dev.GetName(); ret == nvml.SUCCESS {
			d.name = nm
		}
		s.devs = append(s.devs, d)
	}
	return s, nil
}

// Sample implements Source: per GPU, memory info (v2, else v1), then the
// compute and graphics running processes. A process that exits between
// the two lists, or before its name is read, is kept with what NVML gave.
// A GPU whose memory cannot be read fails the tick (ERROR_GPU_IS_LOST, ...).
func (s *nvmlSource) Sample(dst []GPUSample) ([]GPUSample, error) {
	now := s.cfg.Now().UTC().UnixMicro()
	clear(s.seen)
	for i := range s.devs {
		d := &s.devs[i]
		g := GPUSample{TimeUs: now, Host: s.cfg.Host, Index: d.index, UUID: d.uuid, Name: d.name}
		if err := s.memory(d, &g); err != nil {
			return dst, err
		}
		procs, err := s.processes(d)
		if err != nil {
			return dst, err
		}
		g.Processes = procs
		dst = append(dst, g)
	}
	// Forget the names of processes no longer seen: pids are reused.
	for pid := range s.names {
		if !s.seen[pid] {
			delete(s.names, pid)
		}
	}
	return dst, nil
}

func (s *nvmlSource) memory(d *nvmlDevice, g *GPUSample) error {
	if !d.v1 {
		m, ret := d.dev.GetMemoryInfo_v2()
		switch ret {
		case nvml.SUCCESS:
			g.MemoryInfo = 2
			g.TotalBytes, g.ReservedBytes, g.UsedBytes, g.FreeBytes = int64(m.Total), int64(m.Reserved), int64(m.Used), int64(m.Free)
			return nil
		case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND, nvml.ERROR_ARGUMENT_VERSION_MISMATCH:
			d.v1 = true // an older driver: v1 from now on
		default:
			return fmt.Errorf("GPU %d: nvmlDeviceGetMemoryInfo_v2: %v", d.index, nvmlError(ret))
		}
	}
	m, ret := d.dev.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("GPU %d: nvmlDeviceGetMemoryInfo: %v", d.index, nvmlError(ret))
	}
	g.MemoryInfo = 1
	g.TotalBytes, g.UsedBytes, g.FreeBytes = int64(m.Total), int64(m.Used), int64(m.Free)
	return nil
}

// processes lists the compute and then the graphics processes of d; a
// process in both lists appears once, typed "compute+graphics".
func (s *nvmlSource) processes(d *nvmlDevice) ([]Process, error) {
	compute, ret := d.dev.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
		return nil, fmt.Errorf("GPU %d: nvmlDeviceGetComputeRunningProcesses: %v", d.index, nvmlError(ret))
	}
	var graphics []nvml.ProcessInfo
	if !d.noGraphics {
		graphics, ret = d.dev.GetGraphicsRunningProcesses()
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_NOT_SUPPORTED:
			d.noGraphics = true
		default:
			return nil, fmt.Errorf("GPU %d: nvmlDeviceGetGraphicsRunningProcesses: %v", d.index, nvmlError(ret))
		}
	}
	if len(compute)+len(graphics) == 0 {
		return nil, nil
	}
	out := make([]Process, 0, len(compute)+len(graphics))
	clear(s.procBuf)
	add := func(infos []nvml.ProcessInfo, typ string) {
		for _, p := range infos {
			pid := int64(p.Pid)
			pr := Process{PID: pid, Type: typ}
			// NVML_VALUE_NOT_AVAILABLE is all ones in the unsigned field.
			if p.UsedGpuMemory != ^uint64(0) && p.UsedGpuMemory < 1<<62 {
				pr.UsedBytes, pr.HasUsed = int64(p.UsedGpuMemory), true
			}
			if j, ok := s.procBuf[pid]; ok {
				// Both lists: one process; its memory is counted once.
				q := &out[j]
				if q.Type != typ {
					q.Type = "compute+graphics"
				}
				if pr.HasUsed && (!q.HasUsed || pr.UsedBytes > q.UsedBytes) {
					q.UsedBytes, q.HasUsed = pr.UsedBytes, true
				}
				continue
			}
			pr.Name = s.name(pid)
			s.procBuf[pid] = len(out)
			out = append(out, pr)
		}
	}
	add(compute, "compute")
	add(graphics, "graphics")
	return out, nil
}

// name returns the process name of pid: NVML's (the executable's path),
// else /proc/PID/comm, cached while the pid keeps being seen.
func (s *nvmlSource) name(pid int64) string {
	s.seen[pid] = true
	if n, ok := s.names[pid]; ok {
		return n
	}
	n, ret := s.lib.SystemGetProcessName(int(pid))
	if ret != nvml.SUCCESS || n == "" {
		// ERROR_NOT_FOUND: it exited since it was listed; ERROR_NO_PERMISSION:
		// another user's. /proc may still know it.
		n = procComm(pid)
	}
	s.names[pid] = n
	return n
}

// Close implements Source (nvmlShutdown).
func (s *nvmlSource) Close() error {
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvmlShutdown: %v", nvmlError(ret))
	}
	return nil
}

// nvmlError names an NVML return code and its text.
func nvmlError(ret nvml.Return) error {
	return fmt.Errorf("%s (NVML return %d)", ret.Error(), int32(ret))
}
