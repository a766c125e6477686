package cmd

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/gpuleak/gpuleak/report"
)

// Main runs gpuleak with args and returns the process exit code. Errors go
// to ios.ErrOut as one "gpuleak: ..." line each; a panic is reported as an
// internal error rather than a crash.
func Main(args []string, ios *IOStreams, version string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(ios.ErrOut, "gpuleak: internal error: %v\n%s", r, debug.Stack())
			code = ExitInternal
		}
	}()
	if version == "dev" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
	}
	root := NewCmdRoot(ios, version)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && !errors.Is(err, ErrFindings) {
		msg := err.Error()
		if !isKnown(err) && isCobraUsage(msg) {
			err = &UsageError{Err: err}
		}
		// One line, whatever a path or an input holds.
		fmt.Fprintf(ios.ErrOut, "gpuleak: %s\n", report.Clean(msg))
	}
	return ExitCode(err)
}

func isKnown(err error) bool {
	var ue *UsageError
	var ie *InputError
	return errors.As(err, &ue) || errors.As(err, &ie)
}

// isCobraUsage recognises the argument errors cobra returns as plain
// errors (unknown command, wrong number of arguments).
func isCobraUsage(msg string) bool {
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
