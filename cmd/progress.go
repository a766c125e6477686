package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
)

// progress shows how much of an input has been read, on standard error,
// only when standard error is a terminal and the input is large enough to
// take a while. It is cleared when the input is done.
type progress struct {
	bar  *progressbar.ProgressBar
	stop chan struct{}
	done chan struct{}
}

// progressMinBytes: smaller inputs are read in well under a second.
const progressMinBytes = 64 << 20

func startProgress(w io.Writer, tty bool, name string, size int64, read func() int64) *progress {
	if !tty || (size >= 0 && size < progressMinBytes) {
		return nil
	}
	desc := "reading " + name
	if size >= 0 {
		desc = fmt.Sprintf("reading %s (%s)", name, humanize.IBytes(uint64(size)))
	}
	p := &progress{
		bar: progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(desc),
			// No rate: its first samples, taken as buffers fill, are absurd.
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(30),
		),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.bar.Set64(read())
			}
		}
	}()
	return p
}

func (p *progress) Stop() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.bar.Clear()
}
