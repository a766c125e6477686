package cmd

import (
	"errors"
	"fmt"

	"github.com/gpuleak/gpuleak/pipeline"
)

// Exit codes, documented in README.md ("Exit codes").
const (
	ExitOK       = 0 // success
	ExitFindings = 1 // findings matched --fail-on
	ExitInput    = 2 // bad usage, or an input that cannot be read or parsed
	ExitInternal = 3 // a bug or an I/O failure writing the report
)

// UsageError is a command-line mistake: an unknown flag, a bad flag value,
// a missing argument. Hint, when set, is a line of gpuleak's own (where
// to read the usage) printed below the error.
type UsageError struct {
	Err  error
	Hint string
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// InputError wraps the failure to read or parse inputs; the pipeline
// returns it.
type InputError = pipeline.InputError

// ErrFindings is returned after a complete report when findings matched
// --fail-on; the report itself has been written.
var ErrFindings = errors.New("findings matched --fail-on")

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	var ue *UsageError
	var ie *InputError
	var ce *ChildExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ce):
		return ce.Code
	case errors.Is(err, ErrFindings):
		return ExitFindings
	case errors.As(err, &ue), errors.As(err, &ie):
		return ExitInput
	}
	return ExitInternal
}
