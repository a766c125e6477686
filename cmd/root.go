// Package cmd holds gpuleak's cobra commands. Each command has an Options
// struct (its flags and dependencies), a NewCmdX constructor and a runX
// function; nothing here keeps package-level state.
package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

// NewCmdRoot builds the gpuleak command tree.
func NewCmdRoot(ios *IOStreams, version string) *cobra.Command {
	root := &cobra.Command{
		Use:   "gpuleak",
		Short: "Find GPU memory leaks and explain out-of-memory crashes from files you already have",
		Long: `gpuleak reads the files an ML job leaves behind and tells where GPU memory went:
which call sites hold memory that is never released, whether it keeps growing
(a leak) or was allocated once and held (weights, optimizer state, workspaces),
and, from NVML samples, which GPU and process grows and when it runs out.

It reads PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot),
out-of-memory messages and the logs around them (CUDA, ROCm, XPU, MPS),
torch.cuda.memory_summary() tables and memory_stats() JSON, PyTorch profiler
traces (Kineto JSON, export_memory_timeline), compute-sanitizer leak reports
(text or XML) and NVML sample logs (nvidia-smi, dmon, pmon, pynvml, gpustat,
DCGM exporter). Inputs are recognised by content, not by name;
gzip-compressed inputs are read transparently; "-" reads standard input.
Nothing is executed from an input: pickles are decoded with data opcodes only.

Built with NVML (make build-nvml), capture samples GPU memory live into a log
the other commands read, and watch shows it live.`,
		Example: `  gpuleak analyze snapshot.pickle
  gpuleak analyze --format json run1.pickle run2.pickle.gz > report.json
  gpuleak analyze --fail-on leak --min-bytes 64MiB artifacts/*.pickle   # CI gate`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetVersionTemplate("gpuleak {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: err, Hint: fmt.Sprintf("Run '%s --help' for usage.", c.CommandPath())}
	})
	root.AddCommand(NewCmdAnalyze(ios, version, nil))
	root.AddCommand(NewCmdTrend(ios, version, nil))
	root.AddCommand(NewCmdOOM(ios, version, nil))
	root.AddCommand(NewCmdCapture(ios, version, nil))
	root.AddCommand(NewCmdWatch(ios, version, nil))
	root.AddCommand(NewCmdDiff(ios, version, nil))
	root.AddCommand(NewCmdReport(ios, version, nil))
	root.AddCommand(NewCmdExport(ios, version, nil))
	return root
}
