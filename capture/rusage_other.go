//go:build !unix

package capture

import "time"

func cpuTime() time.Duration { return -1 }
