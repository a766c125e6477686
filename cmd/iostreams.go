package cmd

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IOStreams are the standard streams a command uses, injected so that tests
// run commands against buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutTTY and ErrTTY say whether Out and ErrOut are terminals: tables
	// are decorated and progress is shown only there.
	OutTTY bool
	ErrTTY bool
}

// System returns the process's standard streams.
func System() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
	}
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
