//go:build nvml

package capture

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// H200 numbers from the real capture (testdata/nvml/capture_h200_100ms.jsonl).
const (
	h200Total    = 150754820096
	h200Reserved = 644939776
)

// fakeGPU is a mocked device: an H200 with v2 memory info, one compute
// process (pid 450) and no graphics processes, unless a test changes it.
func fakeGPU(i int) *mock.Device {
	return &mock.Device{
		GetUUIDFunc: func() (string, nvml.Return) { return "GPU-" + string(rune('a'+i)), nvml.SUCCESS },
		GetNameFunc: func() (string, nvml.Return) { return "NVIDIA H200", nvml.SUCCESS },
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: h200Total, Reserved: h200Reserved, Used: 1 << 30, Free: h200Total - h200Reserved - 1<<30}, nvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: h200Total, Used: h200Reserved + 1<<30, Free: h200Total - h200Reserved - 1<<30}, nvml.SUCCESS
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: 450, UsedGpuMemory: 1 << 30}}, nvml.SUCCESS
		},
		GetGraphicsRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
	}
}

// fakeLib is a mocked NVML with the given devices.
func fakeLib(devs ...*mock.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:           func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i < 0 || i >= len(devs) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return devs[i], nvml.SUCCESS
		},
		SystemGetProcessNameFunc: func(pid int) (string, nvml.Return) { return "/usr/bin/python3", nvml.SUCCESS },
	}
}

var fixedClock = func() time.Time { return time.Date(2026, 12, 1, 2, 21, 12, 793917000, time.UTC) }

func open(t *testing.T, lib nvml.Interface, gpus ...int) *nvmlSource {
	t.Helper()
	s, err := openNVML(lib, Config{GPUs: gpus, Host: "vm", Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sample(t *testing.T, s *nvmlSource) []GPUSample {
	t.Helper()
	got, err := s.Sample(nil)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A normal tick: v2 memory info as NVML gives it, the process with its
// NVML name, the time in µs; every GPU, in index order.
func TestNVMLSample(t *testing.T) {
	lib := fakeLib(fakeGPU(0), fakeGPU(1))
	s := open(t, lib)
	got := sample(t, s)
	if len(got) != 2 || got[0].Index != 0 || got[1].Index != 1 || got[1].UUID != "GPU-b" {
		t.Fatalf("samples %+v: want GPUs 0 and 1", got)
	}
	g := got[0]
	if g.MemoryInfo != 2 || g.TotalBytes != h200Total || g.ReservedBytes != h200Reserved || g.UsedBytes != 1<<30 ||
		g.TotalBytes != g.ReservedBytes+g.UsedBytes+g.FreeBytes {
		t.Errorf("memory %+v: want NVML's v2 numbers", g)
	}
	if g.TimeUs != fixedClock().UnixMicro() || g.Host != "vm" || g.Name != "NVIDIA H200" {
		t.Errorf("sample %+v", g)
	}
	if len(g.Processes) != 1 || g.Processes[0] != (Process{PID: 450, Name: "/usr/bin/python3", UsedBytes: 1 << 30, HasUsed: true, Type: "compute"}) {
		t.Errorf("processes %+v", g.Processes)
	}
	// Names are asked once per pid while it is seen, not every tick.
	sample(t, s)
	if n := len(lib.SystemGetProcessNameCalls()); n != 1 {
		t.Errorf("%d nvmlSystemGetProcessName calls over two ticks of two GPUs with pid 450, want 1", n)
	}
	if err := s.Close(); err != nil || len(lib.ShutdownCalls()) != 1 {
		t.Errorf("Close: %v, %d nvmlShutdown calls", err, len(lib.ShutdownCalls()))
	}
}

// --gpu selects devices; an index NVML does not have is an error naming the range.
func TestNVMLSelectGPUs(t *testing.T) {
	lib := fakeLib(fakeGPU(0), fakeGPU(1))
	got := sample(t, open(t, lib, 1))
	if len(got) != 1 || got[0].Index != 1 {
		t.Errorf("samples %+v: want GPU 1 only", got)
	}
	_, err := openNVML(fakeLib(fakeGPU(0)), Config{GPUs: []int{3}})
	if err == nil || !strings.Contains(err.Error(), "no GPU 3: NVML sees one GPU, index 0") {
		t.Errorf("err %v: want no GPU 3 among one", err)
	}
	_, err = openNVML(fakeLib(fakeGPU(0), fakeGPU(1)), Config{GPUs: []int{3}})
	if err == nil || !strings.Contains(err.Error(), "no GPU 3: NVML sees 2 GPUs, indices 0 to 1") {
		t.Errorf("err %v: want no GPU 3 among 2", err)
	}
}

// Init failures: no library is ErrNoLibrary (exit 2 with the package to
// install); other failures name the call and the NVML error.
func TestNVMLInitErrors(t *testing.T) {
	lib := fakeLib()
	lib.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	if _, err := openNVML(lib, Config{}); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("library not found: %v", err)
	}
	lib.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	if _, err := openNVML(lib, Config{}); err == nil || !strings.Contains(err.Error(), "nvmlInit") {
		t.Errorf("driver not loaded: %v", err)
	}
	lib = fakeLib()
	lib.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	if _, err := openNVML(lib, Config{}); err == nil || !strings.Contains(err.Error(), "nvmlDeviceGetCount") || len(lib.ShutdownCalls()) != 1 {
		t.Errorf("count: %v, %d shutdowns (want 1: a failed open releases NVML)", err, len(lib.ShutdownCalls()))
	}
	lib = fakeLib()
	if _, err := openNVML(lib, Config{}); err == nil || !strings.Contains(err.Error(), "no GPU") {
		t.Errorf("no GPU: %v", err)
	}
	lib = fakeLib(fakeGPU(0))
	lib.DeviceGetHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_NO_PERMISSION }
	if _, err := openNVML(lib, Config{}); err == nil || !strings.Contains(err.Error(), "nvmlDeviceGetHandleByIndex(0)") {
		t.Errorf("handle: %v", err)
	}
	// A GPU that cannot tell its UUID or name is still sampled.
	d := fakeGPU(0)
	d.GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_NOT_SUPPORTED }
	d.GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
	if got := sample(t, open(t, fakeLib(d))); got[0].UUID != "" || got[0].Name != "" || got[0].UsedBytes != 1<<30 {
		t.Errorf("%+v", got[0])
	}
}

// Memory info v2 NOT_SUPPORTED (an older driver): v1 from then on, used
// counting the reservation; the record has no "reserved", and the reader
// then treats used as including it (see AppendJSON).
func TestNVMLMemoryV1Fallback(t *testing.T) {
	d := fakeGPU(0)
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED }
	s := open(t, fakeLib(d))
	for range 3 {
		g := sample(t, s)[0]
		if g.MemoryInfo != 1 || g.UsedBytes != h200Reserved+1<<30 || g.TotalBytes != g.UsedBytes+g.FreeBytes {
			t.Fatalf("v1 sample %+v", g)
		}
		if line := string(AppendJSON(nil, &g)); strings.Contains(line, `"reserved"`) || !strings.Contains(line, `"memory_info":"v1"`) {
			t.Errorf("v1 record %s", line)
		}
	}
	if n := len(d.GetMemoryInfo_v2Calls()); n != 1 {
		t.Errorf("%d v2 calls over 3 ticks, want 1 (v1 from then on)", n)
	}
	// Other errors fail the tick, naming the call.
	d = fakeGPU(0)
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_GPU_IS_LOST }
	if _, err := open(t, fakeLib(d)).Sample(nil); err == nil || !strings.Contains(err.Error(), "GPU 0: nvmlDeviceGetMemoryInfo_v2") {
		t.Errorf("GPU lost: %v", err)
	}
	d = fakeGPU(0)
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_FUNCTION_NOT_FOUND }
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_UNKNOWN }
	if _, err := open(t, fakeLib(d)).Sample(nil); err == nil || !strings.Contains(err.Error(), "nvmlDeviceGetMemoryInfo:") {
		t.Errorf("v1 failure: %v", err)
	}
}

// Process lists: NOT_SUPPORTED means none (compute) or stops asking
// (graphics); a process in both lists is one, "compute+graphics"; memory
// NVML cannot tell (NVML_VALUE_NOT_AVAILABLE) is unknown, not 16 EiB;
// another error fails the tick.
func TestNVMLProcesses(t *testing.T) {
	d := fakeGPU(0)
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 450, UsedGpuMemory: 1 << 30}, {Pid: 451, UsedGpuMemory: ^uint64(0)}}, nvml.SUCCESS
	}
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 450, UsedGpuMemory: 1 << 30}, {Pid: 900, UsedGpuMemory: 64 << 20}}, nvml.SUCCESS
	}
	g := sample(t, open(t, fakeLib(d)))[0]
	want := []Process{
		{PID: 450, Name: "/usr/bin/python3", UsedBytes: 1 << 30, HasUsed: true, Type: "compute+graphics"},
		{PID: 451, Name: "/usr/bin/python3", Type: "compute"},
		{PID: 900, Name: "/usr/bin/python3", UsedBytes: 64 << 20, HasUsed: true, Type: "graphics"},
	}
	if len(g.Processes) != len(want) {
		t.Fatalf("processes %+v, want %+v", g.Processes, want)
	}
	for i := range want {
		if g.Processes[i] != want[i] {
			t.Errorf("process %d: %+v, want %+v", i, g.Processes[i], want[i])
		}
	}
	if line := string(AppendJSON(nil, &g)); !strings.Contains(line, `{"pid":451,"name":"/usr/bin/python3","type":"compute","used":null}`) {
		t.Errorf("record %s: want used null for pid 451", line)
	}

	d = fakeGPU(0)
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	s := open(t, fakeLib(d))
	for range 3 {
		if g := sample(t, s)[0]; len(g.Processes) != 0 || g.UsedBytes != 1<<30 {
			t.Fatalf("%+v: want the GPU's memory and no process", g)
		}
	}
	if n := len(d.GetGraphicsRunningProcessesCalls()); n != 1 {
		t.Errorf("%d graphics calls over 3 ticks, want 1", n)
	}

	d = fakeGPU(0)
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_UNKNOWN }
	if _, err := open(t, fakeLib(d)).Sample(nil); err == nil || !strings.Contains(err.Error(), "nvmlDeviceGetComputeRunningProcesses") {
		t.Errorf("compute: %v", err)
	}
	d = fakeGPU(0)
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }
	if _, err := open(t, fakeLib(d)).Sample(nil); err == nil || !strings.Contains(err.Error(), "nvmlDeviceGetGraphicsRunningProcesses") {
		t.Errorf("graphics: %v", err)
	}
}

// A process that exits between the process list and the name lookup
// (nvmlSystemGetProcessName: NOT_FOUND) is recorded with what NVML gave:
// its pid and memory; its name from /proc when still there, else empty.
// Once it is no longer listed, its cached name is forgotten (pids are reused).
func TestNVMLProcessExitsBetweenCalls(t *testing.T) {
	procs := []nvml.ProcessInfo{{Pid: 450, UsedGpuMemory: 1 << 30}, {Pid: 2147483000, UsedGpuMemory: 2 << 30}}
	d := fakeGPU(0)
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return procs, nvml.SUCCESS }
	lib := fakeLib(d)
	lib.SystemGetProcessNameFunc = func(pid int) (string, nvml.Return) {
		if pid == 2147483000 {
			return "", nvml.ERROR_NOT_FOUND
		}
		return "/usr/bin/python3", nvml.SUCCESS
	}
	s := open(t, lib)
	g := sample(t, s)[0]
	if len(g.Processes) != 2 || g.Processes[1] != (Process{PID: 2147483000, UsedBytes: 2 << 30, HasUsed: true, Type: "compute"}) {
		t.Fatalf("processes %+v: want the exited pid kept, nameless", g.Processes)
	}
	procs = procs[:1] // it is gone from the list
	sample(t, s)
	if _, ok := s.names[2147483000]; ok {
		t.Error("the exited pid's name is still cached")
	}
}

// The sampling loop over the mocked library: MaxErrors ticks in a row
// failing stop Run with the NVML error; a single failure is skipped and
// counted.
func TestRunWithNVMLFailures(t *testing.T) {
	d := fakeGPU(0)
	n := 0
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		n++
		if n == 2 || n > 4 {
			return nvml.Memory_v2{}, nvml.ERROR_GPU_IS_LOST
		}
		return nvml.Memory_v2{Total: h200Total, Reserved: h200Reserved, Used: 1, Free: h200Total - h200Reserved - 1}, nvml.SUCCESS
	}
	lib := fakeLib(d)
	s, err := openNVML(lib, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	st, err := Run(t.Context(), s, NewStreamWriter(&out), RunOptions{Interval: 10 * time.Millisecond, MaxErrors: 3})
	if err == nil || !strings.Contains(err.Error(), "3 samples in a row failed") || !strings.Contains(err.Error(), "GPU_IS_LOST") && !strings.Contains(err.Error(), "GPU is lost") {
		t.Errorf("err %v", err)
	}
	if st.Ticks != 3 || st.Failed != 4 || strings.Count(out.String(), "\n") != 3 {
		t.Errorf("%d ticks written, %d failed, %d lines; want 3, 4 (1 skipped, then 3 in a row), 3", st.Ticks, st.Failed, strings.Count(out.String(), "\n"))
	}
}
