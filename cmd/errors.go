package cmd

import (
	"errors"
	"fmt"

	"github.com/gpuleak/gpuleak/report"
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

// InputError wraps the failure to read or parse one input.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// unreadInputs collects the inputs that could not be read, so that the
// others are still reported: Err is nil when every input was read, else
// an InputError naming the first failure (and how many more).
type unreadInputs struct {
	first error
	n     int
	// byPath: each failed input's error (the daily report tells files it
	// skips from files it could not read).
	byPath map[string]error
}

// add records a failed input and returns its report entry.
func (u *unreadInputs) add(path string, err error) report.Input {
	if u.first == nil {
		u.first = err
	}
	u.n++
	if u.byPath == nil {
		u.byPath = map[string]error{}
	}
	u.byPath[path] = err
	return report.Input{Path: path, Error: err.Error(), Warnings: []string{}}
}

// Err is the error the command returns after writing the report.
func (u *unreadInputs) Err() error {
	switch {
	case u.n == 0:
		return nil
	case u.n == 1:
		return &InputError{Err: u.first}
	}
	return &InputError{Err: fmt.Errorf("%w (and %d more inputs could not be read; the report lists them)", u.first, u.n-1)}
}

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
