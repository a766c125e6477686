package cmd

import (
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/pipeline"
)

// parseNVMLFlags checks and parses the NVML flags of "gpuleak analyze":
// --tz, --fields and --gpu-memory.
func parseNVMLFlags(tz, fields, gpuMemory string) (pipeline.NVMLOptions, error) {
	var o pipeline.NVMLOptions
	loc, err := parseZone(tz)
	if err != nil {
		return o, usageErrorf("bad --tz %q: %v", tz, err)
	}
	o.Reader = append(o.Reader, nvml.WithLocation(loc))
	for _, f := range strings.Split(fields, ",") {
		if f = strings.TrimSpace(f); f != "" {
			o.Fields = append(o.Fields, f)
		}
	}
	if len(o.Fields) > 0 {
		o.Reader = append(o.Reader, nvml.WithFields(o.Fields))
	}
	if gpuMemory != "" {
		n, err := humanize.ParseBytes(gpuMemory)
		if err != nil || n == 0 || n > 1<<50 {
			return o, usageErrorf("bad --gpu-memory %q: want a size such as 80GiB", gpuMemory)
		}
		o.Trend.GPUMemoryBytes = int64(n)
	}
	return o, nil
}
