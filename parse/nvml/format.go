package nvml

import "github.com/gpuleak/gpuleak/parse"

// The NVML sample logs this package reads into its samples table (see the
// package documentation for each layout). The string values appear in
// reports (each input's "format") and in the samples' source column, and
// are stable.
const (
	// FormatQueryGPU is nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits].
	FormatQueryGPU parse.Format = "nvidia-smi-query-gpu"
	// FormatQueryApps is nvidia-smi --query-compute-apps=... --format=csv[,noheader][,nounits].
	FormatQueryApps parse.Format = "nvidia-smi-query-apps"
	// FormatDmon is nvidia-smi dmon text (-s m, -s mu, ...; -o DT, -o T or none).
	FormatDmon parse.Format = "nvidia-smi-dmon"
	// FormatPmon is nvidia-smi pmon text (-s m, -s mu, ...; -o DT, -o T or none).
	FormatPmon parse.Format = "nvidia-smi-pmon"
	// FormatDcgmiDmon is DCGM's dcgmi dmon text with the frame buffer
	// fields (-e 252 for FBUSD; 250 FBTTL, 251 FBFRE, 253 FBRSV).
	FormatDcgmiDmon parse.Format = "dcgmi-dmon"
	// FormatPynvmlJSONL is a pynvml sampler's JSON lines: ts, gpu, uuid,
	// total, used, free, reserved, processes.
	FormatPynvmlJSONL parse.Format = "pynvml-jsonl"
	// FormatGpustatJSON is gpustat --json documents, one per sample,
	// pretty-printed or one per line.
	FormatGpustatJSON parse.Format = "gpustat-json"
	// FormatDCGMPrometheus is the DCGM exporter's Prometheus text:
	// DCGM_FI_DEV_FB_USED, _FREE, _TOTAL, _RESERVED.
	FormatDCGMPrometheus parse.Format = "dcgm-prometheus"
	// FormatNvidiaSmiText is nvidia-smi's default table or its -q report,
	// one or more outputs (gpustat's text among them).
	FormatNvidiaSmiText parse.Format = "nvidia-smi-text"
	// FormatGpustatText is gpustat's text output, one or more.
	FormatGpustatText parse.Format = "gpustat-text"
	// FormatNvidiaSmiXML is nvidia-smi -q -x: the -q report as XML
	// (nvsmi_device_v9.dtd to v13.dtd), one <nvidia_smi_log> document per
	// output and sampling instant at its <timestamp>. Read: each <gpu>'s
	// product_name, uuid and fb_memory_usage (total, reserved, used, free:
	// "N MiB", stored as bytes) and each process_info's pid, process_name
	// and used_memory. A document is at most 16 MiB and 64 elements deep;
	// one cut short is read up to the cut (Metadata.Cut), and an input
	// without a GPU's memory, or with malformed XML, is a *parse.Error
	// naming the line.
	FormatNvidiaSmiXML parse.Format = "nvidia-smi-xml"
	// FormatPynvmlText is a program's log with pynvml's printouts of
	// nvmlDeviceGetMemoryInfo: "c_nvmlMemory_t(total: N B, free: N B,
	// used: N B)" and c_nvmlMemory_v2_t's (with version and reserved),
	// behind a log's date and time or none.
	FormatPynvmlText parse.Format = "pynvml-text"
)

// Formats lists every format of this package.
var Formats = []parse.Format{FormatQueryGPU, FormatQueryApps, FormatDmon, FormatPmon, FormatDcgmiDmon, FormatPynvmlJSONL,
	FormatGpustatJSON, FormatDCGMPrometheus, FormatNvidiaSmiText, FormatGpustatText, FormatNvidiaSmiXML, FormatPynvmlText}
