// Command gpuleak finds GPU memory leaks and explains out-of-memory crashes
// from PyTorch memory snapshots and other files a job leaves behind.
package main

import (
	"os"

	"github.com/gpuleak/gpuleak/cmd"
)

// version is set at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() { os.Exit(cmd.Main(os.Args[1:], cmd.System(), version)) }
