package oom

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/pickle"
	"github.com/gpuleak/gpuleak/parse/pytorch"
	"github.com/gpuleak/gpuleak/parse/pytorchtext"
)

// FuzzPostmortem runs arbitrary bytes through the OOM postmortem: as a
// snapshot (backward replay from whatever final state it claims, undoing
// whatever entries it holds) and as a log, together. Whatever the input,
// the analysis ends without a panic and every OOM report is whole.
func FuzzPostmortem(f *testing.F) {
	// Small real seeds: the fuzzer minimizes by re-running inputs.
	// state_only.pickle has more frames than a batch of 64 holds, so a
	// name kept from a released batch fails checkNames from the seed on.
	for _, name := range []string{"oom_other_process.pickle", "oom_error.txt", "state_only.pickle", "oom_other_process_traceback.txt"} {
		if b, err := os.ReadFile("../../testdata/pytorch/" + name); err == nil {
			f.Add(b)
		}
	}
	// Three OOM tracebacks of 12 frames: more frames than a text batch of
	// 16 rows, for the same reason.
	var log []byte
	for k := 0; k < 3; k++ {
		log = append(log, "Traceback (most recent call last):\n"...)
		for d := 0; d < 12; d++ {
			log = fmt.Appendf(log, "  File \"/home/user/m%d_%d.py\", line %d, in f%d_%d\n    x()\n", k, d, d+1, k, d)
		}
		log = fmt.Appendf(log, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %d.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 10.00 MiB is free. "+
			"Of the allocated memory 78.50 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n", k+1)
	}
	f.Add(log)
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(parse.NewRecyclingAllocator(1 << 20))
		defer mem.AssertSize(t, 0)
		var ins []Input
		lim := pickle.Limits{MaxStack: 1 << 12, MaxItems: 1 << 14, MaxString: 1 << 16}
		r := pytorch.NewReader(bytes.NewReader(data), "fuzz", pytorch.WithAllocator(mem), pytorch.WithBatchSize(64), pytorch.WithLimits(lim))
		a := snapshot.NewAnalyzer(snapshot.LeakOptions{})
		for r.Next() {
			if err := a.Add(r.Table(), r.RecordBatch()); err != nil {
				t.Fatal(err)
			}
		}
		if r.Err() == nil {
			ins = append(ins, Input{Path: "s", Snapshot: a.Finalize()})
		}
		r.Release()
		tr := pytorchtext.NewReader(bytes.NewReader(data), "t", pytorchtext.WithAllocator(mem), pytorchtext.WithBatchSize(16))
		ta := NewTextAnalyzer()
		for tr.Next() {
			if err := ta.Add(tr.Table(), tr.RecordBatch()); err != nil {
				t.Fatal(err)
			}
		}
		if tr.Err() == nil {
			ins = append(ins, Input{Path: "t", Text: ta.Finalize()})
		}
		tr.Release()
		pm := NewPostmortem(ins, PostmortemOptions{})
		checkNames(t, data, lim, ins, pm)
		for _, o := range pm.OOMs {
			if len(o.Sources) == 0 || (o.Memory != nil && o.Memory.Total.FreeBytes < 0 && o.Memory.Total.Segments == 0) {
				t.Fatalf("report %+v", o)
			}
		}
	})
}

// FuzzReplay drives the backward replay with arbitrary final states and
// traces: segments, blocks and entries decoded from the bytes, sizes and
// addresses chosen near each other so that they meet. The replay never
// panics, and its totals are the sums of its pools.
func FuzzReplay(f *testing.F) {
	f.Add([]byte{1, 4, 0, 2, 0, 1, 7, 0, 2, 1, 2, 1, 3, 1, 4, 5, 6})
	f.Add([]byte{3, 20, 1, 1, 5, 9, 2, 3, 8, 0, 7, 1, 5, 3, 2, 6, 2, 8, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := int(data[0])
			data = data[1:]
			return b
		}
		const unit = 1 << 20
		var segs []seg
		var blks []blk
		for n := next() % 4; n > 0; n-- {
			s := seg{addr: uint64(next()%16) * 4 * unit, size: int64(next()%5+1) * unit, small: next()%2 == 1, stream: int64(next() % 2), expandable: next()%3 == 0}
			segs = append(segs, s)
			for k := next() % 3; k > 0; k-- {
				state := "active_allocated"
				if next()%4 == 0 {
					state = "active_pending_free"
				}
				blks = append(blks, blk{seg: s.addr, addr: s.addr + uint64(next()%4)*unit/2, size: int64(next()%3+1) * unit / 2, state: state})
			}
		}
		actions := []string{"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map", "segment_unmap", "oom", "snapshot"}
		var evs []fev
		evs = append(evs, fev{"oom", 0, unit, 0, 1 << 30})
		for len(data) > 0 {
			a := actions[next()%len(actions)]
			evs = append(evs, fev{a, uint64(next()%128) * unit / 2, int64(next()%9-1) * unit / 2, int64(next() % 2), int64(next()) << 20})
		}
		res := syntheticSnapshot(t, segs, blks, evs)
		for _, o := range res.OOMs {
			var sum snapshot.PoolState
			for _, p := range o.Memory.Pools {
				sum.ReservedBytes += p.ReservedBytes
				sum.ActiveBytes += p.ActiveBytes
				sum.FreeBytes += p.FreeBytes
			}
			tot := o.Memory.Total
			if sum.ReservedBytes != tot.ReservedBytes || sum.ActiveBytes != tot.ActiveBytes || sum.FreeBytes != tot.FreeBytes {
				t.Fatalf("totals %+v, pools sum %+v", tot, sum)
			}
		}
		NewPostmortem([]Input{{Path: "x", Snapshot: res}}, PostmortemOptions{})
	})
}

// checkNames asserts that every frame name in the results (any Frame
// reachable from them) is text the input holds: a substring of data, or of
// a string the pickle in data decodes to (protocol 0 escapes and latin-1
// BINSTRINGs are not verbatim). A name from a released batch's reused
// buffer (issue 8) is neither.
func checkNames(t *testing.T, data []byte, lim pickle.Limits, results ...any) {
	t.Helper()
	var decoded []string
	if v, err := pickle.Decode(bytes.NewReader(data), "fuzz", nil, lim); err == nil {
		seen := map[*pickle.Container]bool{}
		var walk func(v pickle.Value)
		walk = func(v pickle.Value) {
			if s, ok := v.Str(); ok {
				decoded = append(decoded, s)
			}
			if c := v.Container(); c != nil && !seen[c] {
				seen[c] = true
				for _, it := range c.Items {
					walk(it)
				}
			}
		}
		walk(v)
	}
	inInput := func(s string) bool {
		if s == "" || bytes.Contains(data, []byte(s)) {
			return true
		}
		for _, d := range decoded {
			if strings.Contains(d, s) {
				return true
			}
		}
		return false
	}
	frameType := reflect.TypeOf(callsite.Frame{})
	visited := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if v.Kind() == reflect.Pointer {
				if visited[v.Pointer()] {
					return
				}
				visited[v.Pointer()] = true
			}
			walk(v.Elem())
		case reflect.Struct:
			if v.Type() == frameType {
				f := v.Interface().(callsite.Frame)
				if !inInput(f.Filename) || !inInput(f.Name) {
					t.Fatalf("frame %q in %q is not in the input", f.Name, f.Filename)
				}
				return
			}
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				walk(it.Key())
				walk(it.Value())
			}
		}
	}
	for _, r := range results {
		walk(reflect.ValueOf(r))
	}
}
