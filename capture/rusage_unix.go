//go:build unix

package capture

import (
	"syscall"
	"time"
)

// cpuTime is the user + system CPU time this process has used, -1 if unknown.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
