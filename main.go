// Command gpuleak finds GPU memory leaks and explains out-of-memory crashes
// from PyTorch memory snapshots and other files a job already leaves behind.
package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/gpuleak/gpuleak/cmd"
)

// version is set at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	// A reader that stops early (gpuleak analyze ... | head) closes the
	// pipe: let writes fail with EPIPE, which cmd.Main maps to a quiet
	// exit 0, rather than be killed by SIGPIPE (exit 141 in a shell).
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(cmd.Main(os.Args[1:], cmd.System(), version))
}
