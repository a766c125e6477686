package cmd

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/gpuleak/gpuleak/report"
)

// Main runs gpuleak with args and returns the process exit code. Errors go
// to ios.ErrOut as one "gpuleak: ..." line each; a panic is reported as an
// internal error rather than a crash. A write to ios.Out that fails with
// EPIPE (its reader closed the pipe, as head does) fails nothing: the
// commands that write a document go on to their outcome (see
// writeFailed); elsewhere it ends the run quietly with ExitOK. main
// ignores SIGPIPE so that such a write returns EPIPE.
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
	if errors.Is(err, syscall.EPIPE) {
		// Standard output was closed by its reader (| head): what it
		// wanted was written. Nothing to say, nothing failed.
		return ExitOK
	}
	if err != nil && !errors.Is(err, ErrFindings) {
		msg := err.Error()
		if !isKnown(err) && isCobraUsage(msg) {
			// cobra's unknown command comes with its suggestions on lines
			// of their own ("\n\nDid you mean this?\n\tanalyze\n"), which
			// Clean would print as escapes: they become the hint.
			first, rest, _ := strings.Cut(msg, "\n")
			err = &UsageError{Err: errors.New(first), Hint: cobraHint(first, rest)}
			msg = first
		}
		// One line, whatever a path or an input holds; then gpuleak's
		// own hint, if any.
		fmt.Fprintf(ios.ErrOut, "gpuleak: %s\n", report.Clean(msg))
		var ue *UsageError
		if errors.As(err, &ue) && ue.Hint != "" {
			fmt.Fprintln(ios.ErrOut, ue.Hint)
		}
	}
	return ExitCode(err)
}

func isKnown(err error) bool {
	var ue *UsageError
	var ie *InputError
	return errors.As(err, &ue) || errors.As(err, &ie)
}

// cobraHint turns the lines cobra adds after an argument error (its
// suggestions) into one line, and points an unknown command to the list
// of commands.
func cobraHint(first, rest string) string {
	var words []string
	for _, l := range strings.Split(rest, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			words = append(words, l)
		}
	}
	var hint string
	if len(words) > 1 && strings.HasSuffix(words[0], "?") {
		hint = words[0] + " " + strings.Join(words[1:], ", ")
	} else if len(words) > 0 {
		hint = strings.Join(words, " ")
	}
	if strings.HasPrefix(first, "unknown command") {
		if hint != "" {
			hint += "\n"
		}
		hint += "Run 'gpuleak --help' for the commands."
	}
	return hint
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

// writeFailed is the error of a command's write of its document to
// standard output, what: nil when the write succeeded or when its reader
// closed the pipe (| head) and took what it wanted. Such a reader fails
// nothing, but it must not decide the run's outcome either: the command
// goes on to its gates and unread inputs, so that a tripped gate is still
// exit 1 and an unreadable input still exit 2, named on standard error
// (analyze --fail-on leak snap.pickle | head exited 0, in silence). Any
// other write error is the run's own (exit 3).
func writeFailed(err error, what string) error {
	if err == nil || errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return fmt.Errorf("writing %s: %w", what, err)
}
