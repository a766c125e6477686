package pipeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	anrun "github.com/gpuleak/gpuleak/analyze/run"
	"github.com/gpuleak/gpuleak/report"
)

// joinFacts gathers what the inputs of one Run say about one
// run, to join them: each snapshot's reserved memory over time, and the
// NVML logs' per-process samples.
type joinFacts struct {
	snapshots []snapReserved
	procs     *anrun.ProcessCollector
}

type snapReserved struct {
	path   string
	series []anrun.ReservedSeries
}

func (r *joinFacts) addSnapshot(path string, s []anrun.ReservedSeries) {
	r.snapshots = append(r.snapshots, snapReserved{path, s})
}

// join compares each snapshot with the NVML process of the same run: a
// "non-pytorch" finding for memory outside PyTorch's caching allocator.
// Why a snapshot could not be joined goes to its input's warnings (only
// when NVML logs with processes were given).
func (r *joinFacts) join(inputs []report.Input) []report.Finding {
	if r.procs == nil || len(r.snapshots) == 0 {
		return nil
	}
	procs := r.procs.Processes()
	if len(procs) == 0 {
		return nil
	}
	var out []report.Finding
	for _, s := range r.snapshots {
		for _, dev := range s.series {
			np, why := anrun.Join(dev, s.path, procs)
			if np == nil {
				for i := range inputs {
					if inputs[i].Path == s.path {
						inputs[i].Warnings = append(inputs[i].Warnings, "not joined with the NVML logs: "+why)
					}
				}
				continue
			}
			out = append(out, nonPyTorchFinding(s.path, np))
		}
	}
	return out
}

func nonPyTorchFinding(path string, np *anrun.NonPyTorch) report.Finding {
	dev := np.Device
	at := time.UnixMicro(np.AtUs).UTC().Format("15:04:05")
	msg := fmt.Sprintf("memory outside PyTorch's caching allocator: pid %d (%s) used %s at %s UTC (nvidia-smi), PyTorch reserved %s: %s outside it (the CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers, native extensions calling cudaMalloc themselves)",
		np.PID, np.Process, humanize.IBytes(uint64(max(np.UsedBytes, 0))), at, humanize.IBytes(uint64(max(np.ReservedBytes, 0))), signedIBytes(np.GapBytes))
	span := float64(np.ToUs-np.FromUs) / 1e6
	if np.Grows {
		msg += fmt.Sprintf("; it grew: over the %.1f s both cover, the process grew %s while PyTorch's reserved memory changed %s, so %s (%s/s) was allocated outside PyTorch: a leak in native code; run the program under compute-sanitizer --leak-check full, or check the extension that allocates GPU memory itself (CuPy, a custom CUDA op)",
			span, signedIBytes(np.UsedGrowth), signedIBytes(np.ReservedGrowth), signedIBytes(np.GapGrowth), humanize.IBytes(uint64(max(np.GapPerSecond, 0))))
	} else {
		msg += fmt.Sprintf("; not growing: over the %.1f s both cover, the process changed %s and PyTorch's reserved memory %s", span, signedIBytes(np.UsedGrowth), signedIBytes(np.ReservedGrowth))
	}
	msg += "; " + np.Joined
	if len(np.Limits) > 0 {
		msg += "; " + strings.Join(np.Limits, "; ")
	}
	return report.Finding{Kind: report.KindNonPyTorch, Path: path, Source: "joined", Device: &dev, Bytes: max(np.GapBytes, 0),
		Site: report.Frame{Function: fmt.Sprintf("pid %d (%s)", np.PID, np.Process)}, Message: msg}
}

func signedIBytes(n int64) string {
	if n < 0 {
		return "-" + humanize.IBytes(uint64(-n))
	}
	return "+" + humanize.IBytes(uint64(n))
}
