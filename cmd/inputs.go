package cmd

import (
	"context"

	"github.com/gpuleak/gpuleak/pipeline"
)

// runInputs reads paths through the pipeline with o (validated flags),
// the command's standard input, and progress on its standard error.
func runInputs(ios *IOStreams, version string, o pipeline.Options, paths []string) (*pipeline.Result, error) {
	o.Version, o.Stdin = version, ios.In
	o.Progress = func(name string, size int64, read func() int64) func() {
		return startProgress(ios.ErrOut, ios.ErrTTY, name, size, read).Stop
	}
	return pipeline.Run(context.Background(), o, paths)
}
