package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/pipeline"
	"github.com/gpuleak/gpuleak/report"
)

// runInputs reads paths through the pipeline with o (validated flags),
// the command's standard input, and progress on its standard error.
func runInputs(ios *IOStreams, version string, o pipeline.Options, paths []string) (*pipeline.Result, error) {
	o.Version, o.Stdin = version, ios.In
	o.Progress = func(name string, size int64, read func() int64) func() {
		return startProgress(ios.ErrOut, ios.ErrTTY, name, size, read, progressDelay).Stop
	}
	res, err := pipeline.Run(context.Background(), o, paths)
	if res != nil && res.Report != nil {
		warnReadInPart(ios, "gpuleak", res.Report.Inputs)
	}
	return res, err
}

// warnReadInPart names on standard error each input read in part (lines
// that could not be read skipped, its findings from the rest), as an
// unreadable one is named, and each NVML log with samples above their
// GPU's total left out: a partial read must not pass for a whole one.
func warnReadInPart(ios *IOStreams, prog string, ins []report.Input) {
	for _, in := range ins {
		if note := report.ReadInPart(in); note != "" {
			fmt.Fprintf(ios.ErrOut, "%s: warning: %s: read in part: %s; what is reported of it comes from the rest\n", prog, report.Clean(in.Path), note)
		}
		if n := in.SamplesAboveTotal; n > 0 {
			fmt.Fprintf(ios.ErrOut, "%s: warning: %s: %s used memory above the GPU's total memory (damaged rows, or units that do not match), left out of the trends\n",
				prog, report.Clean(in.Path), counted(n, "sample has", "samples have"))
		}
	}
}

// needFiles is the Args check of a command that reads at least one FILE.
func needFiles(command string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return &UsageError{Err: fmt.Errorf("%s needs at least one FILE (\"-\" reads standard input)", command), Hint: fmt.Sprintf("Run 'gpuleak %s --help' for usage.", command)}
		}
		return nil
	}
}

// validated runs a command once its flags are parsed: validate first, so
// that runF (a test's stand-in for run) gets checked options and a bad
// flag never reaches it, then runF when given, else run.
func validated[O any](opts *O, validate func() error, runF, run func(*O) error) error {
	if err := validate(); err != nil {
		return err
	}
	if runF != nil {
		return runF(opts)
	}
	return run(opts)
}
