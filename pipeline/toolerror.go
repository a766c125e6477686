package pipeline

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
)

// A tool that fails often prints one line of its own instead of its
// output, and that line is what gets saved (nvidia-smi ... > gpu.csv on
// a machine whose driver is gone; compute-sanitizer --xml without --save;
// a PyTorch script that died before it touched the GPU). Such a file is
// no input, and "unrecognised input format" would hide why: toolErrors
// names the tool, what the line means and what to run instead.

// toolError is one such line: Re finds it in a line (the tool's own
// prefix, "========= " or "Error: ", may come before it).
type toolError struct {
	Re    *lazyre.Regexp
	Tool  string
	Means string // what it means: why there is no output
	Do    string // what to run instead
}

// toolErrors are the lines recognised, each the tool's own words. A
// Python exception is its traceback's last line ("AssertionError: Torch
// not compiled with CUDA enabled"), not the source line quoted above it.
var toolErrors = []toolError{
	{lazyre.New(`--xml was enabled but no save location was specified`), "compute-sanitizer",
		"it was run with --xml but without --save, so it wrote no report (its XML goes only to the file --save names)",
		"rerun with --xml --save report.xml and give report.xml, or without --xml and give its text log (--log-file sanitizer.log)"},
	{lazyre.New(`Target application terminated before first instrumented API call`), "compute-sanitizer",
		"the program ended before its first CUDA call the tool checks (it failed at start, exited early, or never used the GPU), so nothing was checked",
		"run the program alone to see why it ends, then rerun it under compute-sanitizer and give the whole log"},
	{lazyre.New(`No attachable process found`), "compute-sanitizer",
		"the tool found no process to check: the target did not start, or made no CUDA call within --launch-timeout",
		"check the command line (a launcher script needs --target-processes all), raise --launch-timeout, and give the whole log"},
	{lazyre.New(`NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver`), "nvidia-smi",
		"nvidia-smi could not reach the NVIDIA driver (not loaded, or replaced by an upgrade without a reboot), so it sampled nothing",
		"fix the driver until nvidia-smi alone prints its table, then log the samples again"},
	{lazyre.New(`Failed to initialize NVML: .+`), "nvidia-smi",
		"NVML could not start (a driver and library of different versions, as after an upgrade without a reboot; in a container, devices not passed in), so nothing was sampled",
		"fix what the message says until nvidia-smi alone prints its table, then log the samples again"},
	{lazyre.New(`^\s*No devices were found\s*$`), "nvidia-smi",
		"nvidia-smi saw no GPU (none visible to it: a container started without its GPUs, an empty CUDA_VISIBLE_DEVICES or NVIDIA_VISIBLE_DEVICES, or GPUs fallen off the bus), so it sampled nothing",
		"log on a machine or in a container that sees its GPUs (nvidia-smi -L lists them)"},
	{lazyre.New(`Unable to determine the device handle for GPU.*`), "nvidia-smi",
		"nvidia-smi lost a GPU (fallen off the bus, or an Xid error that needs a reset), and sampled nothing of it",
		"see the kernel log (dmesg) for the GPU's Xid error, reset or reboot, then log again"},
	{lazyre.New(`Field "[^"]*" is not a valid field to query`), "nvidia-smi",
		"a field given to --query-gpu or --query-compute-apps is misspelled, so nvidia-smi logged nothing",
		"list the fields with nvidia-smi --help-query-gpu (or --help-query-compute-apps), e.g. --query-gpu=timestamp,index,memory.used,memory.total"},
	{lazyre.New(`Error on querying NVIDIA devices`), "gpustat",
		"gpustat could not query NVML (no driver, or no GPU visible), so it sampled nothing",
		"fix the driver until nvidia-smi alone prints its table, then log again"},
	// pynvml names each NVML return code NVMLError_<Name> (NVML_ERROR_
	// DRIVER_NOT_LOADED is NVMLError_DriverNotLoaded), and they mean
	// different things: nvmlInit failed, so nothing was read; the GPU
	// was lost; or one query failed on an NVML that works, and what the
	// script printed before it may be readings.
	{lazyre.New(`^\s*([\w.]+\.)?NVMLError_(LibraryNotFound|DriverNotLoaded|Uninitialized|LibRmVersionMismatch): .+`), "pynvml",
		"pynvml could not start NVML (its library not found, the driver not loaded or of another version than the library, or nvmlInit not called), so it sampled nothing",
		"fix what the message says until nvidia-smi alone prints its table, then log again"},
	{lazyre.New(`^\s*([\w.]+\.)?NVMLError_(GpuIsLost|ResetRequired): .+`), "pynvml",
		"NVML lost the GPU (fallen off the bus, or an Xid error that needs a reset), so the sampler stopped there",
		"see the kernel log (dmesg) for the GPU's Xid error, reset or reboot, then log again"},
	{lazyre.New(`^\s*([\w.]+\.)?NVMLError_(NotSupported|NoPermission|InvalidArgument|NotFound|FunctionNotFound|NoData|InsufficientSize|ArgumentVersionMismatch|Deprecated|FreqNotSupported|VgpuEccNotSupported): .+`), "pynvml",
		"one query failed, not NVML: NVML itself worked, but this GPU, its mode (MIG hides utilisation), the driver or the user's permissions do not allow that one query, and the script stopped at it; what it printed before may be readings, but in no layout gpuleak reads",
		"catch the error for that query (or leave it out) and log the memory samples in a layout gpuleak reads, e.g. nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv -l 1"},
	{lazyre.New(`^\s*([\w.]+\.)?NVMLError_\w+: .+`), "pynvml",
		"an NVML call failed and the script stopped at it; what it printed before may be readings, but in no layout gpuleak reads",
		"fix what the message says until nvidia-smi alone prints its table, then log again"},
	{lazyre.New(`^[\w.]*(Error|Exception): .*(Found no NVIDIA driver on your system|No CUDA GPUs are available|no CUDA-capable device is detected|CUDA driver initialization failed).*`), "PyTorch",
		"the program found no GPU to use (no driver, or none visible to it), so it ran no CUDA allocation to report on",
		"run it where PyTorch sees a GPU (python -c 'import torch; print(torch.cuda.is_available())' prints True), then record again"},
	{lazyre.New(`^[\w.]*(Error|Exception): Torch not compiled with CUDA enabled`), "PyTorch",
		"this PyTorch build has no CUDA, so the program made no CUDA allocation to report on",
		"install a CUDA build of PyTorch (pip install torch --index-url https://download.pytorch.org/whl/cuXXX), then record again"},
}

// maxToolErrorLine bounds the length of a line searched for a tool's
// error: its error lines are short.
const maxToolErrorLine = 512

// findToolError returns the first line of head (1-based) that is a tool's
// error, and which; 0 when none is. A pynvml error raised in nvmlInit (its
// traceback's frames above it name it) is NVML not starting, whatever its
// code (initError).
func findToolError(head []byte) (int, string, *toolError) {
	sc := bufio.NewScanner(bytes.NewReader(head))
	sc.Buffer(make([]byte, 0, 4096), len(head)+1)
	var frames []string // the functions of the traceback being read
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) > maxToolErrorLine {
			continue
		}
		if bytes.Contains(line, []byte("Traceback (most recent call last)")) {
			frames = frames[:0]
		} else if m := pyFrameRe.Re().FindSubmatch(line); m != nil {
			frames = append(frames, string(m[1]))
		}
		for i := range toolErrors {
			if m := toolErrors[i].Re.Re().Find(line); m != nil {
				te := &toolErrors[i]
				if te.Tool == "pynvml" && te != &toolErrors[pynvmlInitIdx] && slices.ContainsFunc(frames, isNVMLInit) {
					te = initError(string(bytes.TrimSpace(m)))
				}
				return n, strings.Trim(string(bytes.TrimSpace(m)), "`"), te
			}
		}
	}
	return 0, "", nil
}

// pyFrameRe matches a frame of a Python traceback: `  File "...", line
// 615, in nvmlInit`.
var pyFrameRe = lazyre.New(`^\s*File "[^"]*", line \d+, in (\w+)`)

// isNVMLInit reports whether a traceback's frame is nvmlInit's (or
// nvmlInitWithFlags', nvmlInit_v2's): the call that starts NVML.
func isNVMLInit(f string) bool { return strings.HasPrefix(f, "nvmlInit") }

// pynvmlInitIdx is the index in toolErrors of pynvml's errors that mean
// NVML did not start, whichever call raised them.
var pynvmlInitIdx = slices.IndexFunc(toolErrors, func(t toolError) bool {
	return t.Tool == "pynvml" && strings.Contains(t.Re.String(), "DriverNotLoaded")
})

// initError is the toolError of a pynvml error (line, its traceback's
// last line) that nvmlInit raised: NVML did not start, so nothing was
// sampled, not one query failing on an NVML that works.
func initError(line string) *toolError {
	why, do := "its code says why", "fix what the message says until nvidia-smi alone prints its table, then log again"
	if strings.Contains(line, "NVMLError_NoPermission") {
		why = "the user it ran as may not open the GPU's device files (/dev/nvidia*: a service account, such as a monitoring agent's, without access to them; a container started without them)"
		do = "run the sampler as a user that can open the GPUs (nvidia-smi run as that user prints its table), then log again"
	}
	return &toolError{Tool: "pynvml",
		Means: "nvmlInit raised it (the traceback's frames above it name it): NVML did not start, so nothing was sampled; " + why,
		Do:    do}
}

// maxToolErrorLines is the most lines (not blank) of a file that is a
// tool's error in place of its output: the error, and a few lines the
// tool or the shell printed around it.
const maxToolErrorLines = 8

// toolErrorIn returns the error for an input that is a tool's error in
// place of its output: head is the whole input (shorter than
// parse.SniffLen), of a few lines, one of them a tool's error; nil
// otherwise.
func toolErrorIn(path string, head []byte) error {
	if len(head) >= parse.SniffLen || lines(head) > maxToolErrorLines {
		return nil
	}
	return toolErrorAt(path, head)
}

// toolErrorAt returns the error for the first tool's error line in head,
// nil when it has none: in a compute-sanitizer log that checked nothing,
// the tool's own line says why.
func toolErrorAt(path string, head []byte) error {
	n, text, te := findToolError(head)
	if te == nil {
		return nil
	}
	return &parse.Error{File: path, Offset: -1, Line: n, Err: ErrToolError,
		Msg: fmt.Sprintf("%s's error, not its output: %q: %s; %s", te.Tool, text, te.Means, te.Do)}
}

// toolErrorHint says, for a longer text no format claims, which tool's
// error line it holds and what that means: "" when none.
func toolErrorHint(head []byte) string {
	n, text, te := findToolError(head)
	if te == nil {
		return ""
	}
	return fmt.Sprintf("; line %d is %s's error %q: %s", n, te.Tool, text, te.Means)
}

// lines counts the lines of b that are not blank.
func lines(b []byte) int {
	n := 0
	for l := range bytes.Lines(b) {
		if len(bytes.TrimSpace(l)) > 0 {
			n++
		}
	}
	return n
}

// ErrToolError classifies the error of an input that holds a tool's error
// line in place of the output gpuleak reads (errors.Is).
var ErrToolError = parse.NewKind("a tool's error in place of its output")
