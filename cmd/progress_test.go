package cmd

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine to write
// while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// An input read before the delay shows nothing, whatever its size: most
// inputs are read in well under a second.
func TestProgressNothingBeforeTheDelay(t *testing.T) {
	var w syncBuffer
	p := startProgress(&w, true, "big.pickle", 10<<30, func() int64 { return 1 << 30 }, time.Hour)
	if p == nil {
		t.Fatal("no progress on a terminal")
	}
	p.Stop()
	if s := w.String(); s != "" {
		t.Errorf("wrote %q before the delay", s)
	}
	if p := startProgress(&w, false, "big.pickle", 10<<30, func() int64 { return 0 }, 0); p != nil {
		t.Error("progress started though standard error is not a terminal")
	}
}

// A small file that takes long (a gzipped snapshot of a few MiB unpacks
// to gigabytes) shows progress once the delay has passed: the bar names
// the input and its size as stored, and is cleared at the end.
func TestProgressShownOnceTheDelayPasses(t *testing.T) {
	var w syncBuffer
	var read atomic.Int64
	read.Store(3 << 20)
	p := startProgress(&w, true, "small.pickle.gz", 6<<20, read.Load, time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(w.String(), "small.pickle.gz (6.0 MiB)") {
		if time.Now().After(deadline) {
			p.Stop()
			t.Fatalf("no progress after the delay: %q", w.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(w.String(), "50%") {
		t.Errorf("the bar does not show 3 of 6 MiB read: %q", w.String())
	}
	p.Stop()
	if s := w.String(); !strings.HasSuffix(strings.TrimRight(s, " "), "\r") {
		t.Errorf("the bar was not cleared at the end: %q", s)
	}
}
