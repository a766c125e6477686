package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
)

// progress shows how much of an input has been read, on standard error,
// only when standard error is a terminal and the input has taken a while
// (progressDelay): by time, not by the file's size, since a gzipped
// snapshot of a few MiB can unpack to gigabytes. It is cleared when the
// input is done. The fraction is of the file's bytes as stored (a gzip
// file's compressed bytes), which the reader consumes in step with the
// unpacked ones.
type progress struct {
	stop chan struct{}
	done chan struct{}
}

// progressDelay: an input read sooner shows no progress at all.
const progressDelay = time.Second

// startProgress starts showing the progress of reading name (size bytes
// as stored, -1 when unknown, as from a pipe) on w once delay has passed,
// asking read how many of them have been read; it returns nil, and shows
// nothing, when tty is false.
func startProgress(w io.Writer, tty bool, name string, size int64, read func() int64, delay time.Duration) *progress {
	if !tty {
		return nil
	}
	p := &progress{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		wait := time.NewTimer(delay)
		defer wait.Stop()
		select {
		case <-p.stop:
			return
		case <-wait.C:
		}
		desc := "reading " + name
		if size >= 0 {
			desc = fmt.Sprintf("reading %s (%s)", name, humanize.IBytes(uint64(size)))
		}
		bar := progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(desc),
			// No rate: its first samples, taken as buffers fill, are absurd.
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(30),
		)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			_ = bar.Set64(read())
			select {
			case <-p.stop:
				_ = bar.Clear() // the bar is this goroutine's alone
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// Stop ends the display and clears it; nil (no terminal) is a no-op.
func (p *progress) Stop() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
}
