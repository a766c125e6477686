package cmd

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"
)

// TestHeapProfileLate is a measuring hook, skipped unless
// GPULEAK_HEAPPROFILE_INPUT names a file: it runs `gpuleak analyze
// --format json --top 0` on that file in process and writes to
// GPULEAK_HEAPPROFILE_OUT (default heap.pprof) the heap profile of the
// largest of the samples it takes every GPULEAK_HEAPPROFILE_EVERY
// (default 2s) while the analysis runs, each after a runtime.GC: the live
// heap near its peak, when what grows with the trace is biggest. `go tool
// pprof -sample_index=inuse_space -top` reads it.
func TestHeapProfileLate(t *testing.T) {
	in := os.Getenv("GPULEAK_HEAPPROFILE_INPUT")
	if in == "" {
		t.Skip("GPULEAK_HEAPPROFILE_INPUT not set: a measuring hook")
	}
	out := os.Getenv("GPULEAK_HEAPPROFILE_OUT")
	if out == "" {
		out = "heap.pprof"
	}
	every := 2 * time.Second
	if s := os.Getenv("GPULEAK_HEAPPROFILE_EVERY"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		every = d
	}
	done := make(chan struct{})
	last := make(chan []byte)
	go func() {
		var prof []byte
		var peak uint64
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				last <- prof
				return
			case <-tick.C:
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				t.Logf("heap in use after GC: %.1f MiB", float64(ms.HeapInuse)/(1<<20))
				if ms.HeapInuse < peak {
					continue
				}
				var b bytes.Buffer
				if err := pprof.Lookup("heap").WriteTo(&b, 0); err == nil {
					prof, peak = b.Bytes(), ms.HeapInuse
				}
			}
		}
	}()
	ios := &IOStreams{In: bytes.NewReader(nil), Out: io.Discard, ErrOut: io.Discard}
	code := Main([]string{"analyze", "--format", "json", "--top", "0", in}, ios, "heapprofile")
	close(done)
	prof := <-last
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("exit %d", code)
	}
	if prof == nil {
		t.Fatal("the analysis ended before the first sample: lower GPULEAK_HEAPPROFILE_EVERY")
	}
	if err := os.WriteFile(out, prof, 0o644); err != nil {
		t.Fatal(err)
	}
}
