package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tests in this file build small snapshots of training loops in Go
// (the shapes of a reviewer's synthetic cases: a step of one batch
// allocation at train.py:20 and 4 activations inside nn.Module calls, all
// freed, plus what each case keeps) and check the verdict through the CLI.
// Each expected verdict is reasoned in the test's comment.

type snapFrame struct {
	name, file string
	line       int
}

const sitePackages = "/opt/venv/lib/python3.12/site-packages/"

var moduleFrames = []snapFrame{
	{"forward", sitePackages + "torch/nn/modules/linear.py", 134},
	{"_call_impl", sitePackages + "torch/nn/modules/module.py", 1790},
	{"forward", "/home/user/model.py", 11},
	{"_call_impl", sitePackages + "torch/nn/modules/module.py", 1790},
}

// userAt is a stack of the training function at train.py:line.
func userAt(line int) []snapFrame {
	return []snapFrame{{"train", "/home/user/train.py", line}, {"<module>", "/home/user/train.py", 99}}
}

type snapEvent struct {
	action       string
	addr, size   int64
	timeUs       int64
	frames       []snapFrame
	device, strm int
}

type liveBlock struct {
	size    int64
	frames  []snapFrame
	device  int
	pending bool // freed on its stream, a side stream not yet there: active_pending_free
}

// snapBuilder records a trace and writes it with the segments of what is
// live at the end (one segment per block), as _dump_snapshot would.
type snapBuilder struct {
	events []snapEvent
	live   map[int64]liveBlock
	order  []int64
	addr   int64
	t      int64
}

func newSnapBuilder() *snapBuilder {
	return &snapBuilder{live: map[int64]liveBlock{}, addr: 0x7f0000000000, t: 1_700_000_000_000_000}
}

func (s *snapBuilder) alloc(size int64, fr []snapFrame) int64 {
	a := s.addr
	s.addr += (size+511)/512*512 + 1<<20
	s.t += 10
	s.events = append(s.events, snapEvent{action: "alloc", addr: a, size: size, timeUs: s.t, frames: fr})
	s.live[a] = liveBlock{size: size, frames: fr}
	s.order = append(s.order, a)
	return a
}

func (s *snapBuilder) free(a int64) {
	b := s.live[a]
	delete(s.live, a)
	s.t += 10
	for _, act := range []string{"free_requested", "free_completed"} {
		s.events = append(s.events, snapEvent{action: act, addr: a, size: b.size, timeUs: s.t, frames: b.frames})
	}
}

// freeRequested records a free whose completion waits for a side stream
// (record_stream): the block stays, in state active_pending_free.
func (s *snapBuilder) freeRequested(a int64, fr []snapFrame) {
	b := s.live[a]
	b.pending = true
	s.live[a] = b
	s.t += 10
	s.events = append(s.events, snapEvent{action: "free_requested", addr: a, size: b.size, timeUs: s.t, frames: fr})
}

// freeCompleted records that the side stream reached the free.
func (s *snapBuilder) freeCompleted(a int64) {
	b := s.live[a]
	delete(s.live, a)
	s.t += 10
	s.events = append(s.events, snapEvent{action: "free_completed", addr: a, size: b.size, timeUs: s.t, frames: b.frames})
}

// step is one normal step: a batch (1 MiB at train.py:20) and layers
// activations (2 MiB each, inside module calls), all freed.
func (s *snapBuilder) step(layers int) {
	b := s.alloc(1<<20, userAt(20))
	var acts []int64
	for i := 0; i < layers; i++ {
		acts = append(acts, s.alloc(2<<20, append(append([]snapFrame{}, moduleFrames...), userAt(22)...)))
	}
	for _, a := range acts {
		s.free(a)
	}
	s.free(b)
}

func (s *snapBuilder) write(t *testing.T, traceDevice int) string {
	t.Helper()
	w := newPickleWriter()
	frames := func(fr []snapFrame) func() {
		return func() {
			w.list(len(fr), func(i int) { w.dict("name", fr[i].name, "filename", fr[i].file, "line", fr[i].line) })
		}
	}
	var liveAddrs []int64
	for _, a := range s.order {
		if _, ok := s.live[a]; ok {
			liveAddrs = append(liveAddrs, a)
		}
	}
	w.dict("segments", func() {
		w.list(len(liveAddrs), func(i int) {
			a := liveAddrs[i]
			b := s.live[a]
			r := (b.size + 511) / 512 * 512
			w.dict("device", b.device, "address", a, "total_size", r, "allocated_size", r, "active_size", r,
				"requested_size", b.size, "stream", 0, "segment_type", "large", "is_expandable", 0, "frames", frames(b.frames),
				"blocks", func() {
					w.list(1, func(int) {
						state := "active_allocated"
						if b.pending {
							state = "active_pending_free"
						}
						w.dict("address", a, "size", r, "requested_size", b.size, "state", state, "frames", frames(b.frames))
					})
				})
		})
	}, "device_traces", func() {
		w.list(traceDevice+1, func(d int) {
			if d != traceDevice {
				w.list(0, nil)
				return
			}
			w.list(len(s.events), func(i int) {
				e := s.events[i]
				w.dict("action", e.action, "addr", e.addr, "size", e.size, "stream", 0, "time_us", e.timeUs, "frames", frames(e.frames))
			})
		})
	})
	p := filepath.Join(t.TempDir(), "snap.pickle")
	if err := os.WriteFile(p, w.stop(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (s *snapBuilder) weights() { s.alloc(64<<20, append([]snapFrame{moduleFrames[0]}, userAt(15)...)) }

// TestInnerLoopIsNotTheStep: 100 steps; a cache at :31 gets 1 MiB per step
// for steps 0-39, then stays flat (bounded: retained, plateau at 40); steps
// 0-45 also run a per-sample loop of 40 temporaries at :36, each freed at
// once. The step is the batch at :20 (once per step, with the layers'
// activations in every gap), not :36, whose gaps hold no layer work: 100
// iterations, no leak, exit 0 with --fail-on leak.
func TestInnerLoopIsNotTheStep(t *testing.T) {
	s := newSnapBuilder()
	s.weights()
	for i := 0; i < 100; i++ {
		s.step(4)
		if i < 46 {
			for k := 0; k < 40; k++ {
				s.free(s.alloc(64<<10, userAt(36)))
			}
		}
		if i < 40 {
			s.alloc(1<<20, userAt(31))
		}
	}
	p := s.write(t, 0)
	if code, out, _ := run(t, nil, "analyze", "--fail-on", "leak", p); code != 0 {
		t.Errorf("exit %d with --fail-on leak:\n%s", code, out)
	}
	r := analyzeJSON(t, p)
	if it := r.Inputs[0].Devices[0].Iterations; it != 100 {
		t.Errorf("%d iterations, want 100 (one per step)", it)
	}
	c := one(t, r, "retained", "train.py", 31)
	if c.Bytes != 40<<20 || !strings.Contains(c.Message, "plateau of 40 MiB by iteration 41") {
		t.Errorf("cache %d bytes: %s", c.Bytes, c.Message)
	}
}

// TestInnerLoopOverHistory: a history at :30 keeps 1 MiB a step and a
// regulariser loops over it each step (one temporary per item at :36):
// steps lengthen as the leak grows. 100 iterations, a leak of 100 MiB at
// +1 MiB per iteration.
func TestInnerLoopOverHistory(t *testing.T) {
	s := newSnapBuilder()
	s.weights()
	for i := 0; i < 100; i++ {
		s.step(4)
		for k := 0; k < i; k++ {
			s.free(s.alloc(256<<10, userAt(36)))
		}
		s.alloc(1<<20, userAt(30))
	}
	r := analyzeJSON(t, s.write(t, 0))
	if it := r.Inputs[0].Devices[0].Iterations; it != 100 {
		t.Errorf("%d iterations, want 100", it)
	}
	l := one(t, r, "leak", "train.py", 30)
	if l.Bytes != 100<<20 || l.Growth == nil || l.Growth.BytesPerIteration != 1<<20 {
		t.Errorf("leak %d bytes, growth %+v", l.Bytes, l.Growth)
	}
}

// TestStepsOfVaryingLength: one 1 MiB tensor kept per step at :30 for 100
// steps whose length varies from 2 to 21 layers (growing), or 1 to 30
// (pseudo-random): the batch at :20 is still once per step. A leak of
// 100 MiB, exit 1 with --fail-on leak.
func TestStepsOfVaryingLength(t *testing.T) {
	for name, layers := range map[string]func(int) int{
		"growing": func(i int) int { return 2 + i/5 },
		"random":  func(i int) int { return 1 + (i*7919+13)%30 },
	} {
		t.Run(name, func(t *testing.T) {
			s := newSnapBuilder()
			s.weights()
			for i := 0; i < 100; i++ {
				s.step(layers(i))
				s.alloc(1<<20, userAt(30))
			}
			p := s.write(t, 0)
			if code, _, _ := run(t, nil, "analyze", "--fail-on", "leak", p); code != 1 {
				t.Errorf("exit %d with --fail-on leak, want 1", code)
			}
			r := analyzeJSON(t, p)
			l := one(t, r, "leak", "train.py", 30)
			if l.Bytes != 100<<20 || r.Inputs[0].Devices[0].Iterations != 100 {
				t.Errorf("leak %d bytes, %d iterations", l.Bytes, r.Inputs[0].Devices[0].Iterations)
			}
		})
	}
}

// TestBufferReplacedByBiggerOne: each step allocates (i+1) MiB at :33 and
// frees the previous one (torch.cat onto a history): one block held, but
// the site's live bytes at the iteration starts go 0, 1, ..., 99 MiB: a
// leak of +1 MiB per iteration, also with --min-kept 1.
func TestBufferReplacedByBiggerOne(t *testing.T) {
	s := newSnapBuilder()
	s.weights()
	prev := int64(-1)
	for i := 0; i < 100; i++ {
		s.step(4)
		n := s.alloc(int64(i+1)<<20, userAt(33))
		if prev >= 0 {
			s.free(prev)
		}
		prev = n
	}
	p := s.write(t, 0)
	for _, minKept := range []string{"4", "1"} {
		code, out, _ := run(t, nil, "analyze", "--format", "json", "--top", "0", "--min-kept", minKept, p)
		var r verdictReport
		if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
			t.Fatalf("exit %d, %v", code, err)
		}
		l := one(t, r, "leak", "train.py", 33)
		if l.Bytes != 100<<20 || !strings.Contains(l.Message, "+1.0 MiB per iteration (from 0 B to 99 MiB)") {
			t.Errorf("--min-kept %s: %d bytes: %s", minKept, l.Bytes, l.Message)
		}
	}
}

// TestSawtoothWithRisingFloor: a list at :35 gets 1 MiB a step and is
// cleared every 10 steps but for one tensor: live bytes saw-tooth between
// a floor that rises 1 MiB per clear and the floor + 9 MiB. A leak of the
// 10 survivors (10 MiB); the plain sawtooth (everything cleared) is not.
func TestSawtoothWithRisingFloor(t *testing.T) {
	for _, keepOne := range []bool{true, false} {
		s := newSnapBuilder()
		s.weights()
		var held []int64
		for i := 0; i < 100; i++ {
			s.step(4)
			held = append(held, s.alloc(1<<20, userAt(35)))
			if i%10 == 9 {
				from := 0
				if keepOne {
					from = 1
				}
				for _, a := range held[from:] {
					s.free(a)
				}
				held = nil
			}
		}
		r := analyzeJSON(t, s.write(t, 0))
		if !keepOne {
			if len(leaks(r)) != 0 {
				t.Errorf("plain sawtooth: leaks %+v", leaks(r))
			}
			continue
		}
		l := one(t, r, "leak", "train.py", 35)
		if l.Bytes != 10<<20 || l.Count != 10 || !strings.Contains(l.Message, "floor") {
			t.Errorf("floor leak %d bytes in %d blocks: %s", l.Bytes, l.Count, l.Message)
		}
	}
}

// TestTinyAllocationsOneBasis: 1000 steps each keep a 4-byte tensor
// (a 512-byte block): the growth is told in block bytes, as BYTES is:
// 1000 x 512 B held, +512 B per iteration.
func TestTinyAllocationsOneBasis(t *testing.T) {
	s := newSnapBuilder()
	s.weights()
	for i := 0; i < 1000; i++ {
		s.step(1)
		s.alloc(4, userAt(30))
	}
	l := one(t, analyzeJSON(t, s.write(t, 0)), "leak", "train.py", 30)
	if l.Bytes != 1000*512 || l.Growth == nil || l.Growth.BytesPerIteration != 512 {
		t.Errorf("leak %d bytes, growth %+v: %s", l.Bytes, l.Growth, l.Message)
	}
}

// TestTraceOnADeviceWithoutSegments: the trace is device_traces[3] but
// every segment is on device 0 (a mislabelled or stitched snapshot): the
// segments are the truth, device 3 holds nothing, so no leak is reported
// there (the same memory is device 0's, as live) and a warning says so.
func TestTraceOnADeviceWithoutSegments(t *testing.T) {
	s := newSnapBuilder()
	s.weights()
	for i := 0; i < 100; i++ {
		s.step(4)
		s.alloc(1<<20, userAt(30))
	}
	p := s.write(t, 3)
	if code, _, _ := run(t, nil, "analyze", "--fail-on", "leak", p); code != 0 {
		t.Errorf("exit %d with --fail-on leak, want 0", code)
	}
	r := analyzeJSON(t, p)
	for _, f := range r.Findings {
		if f.Device != nil && *f.Device == 3 {
			t.Errorf("finding on device 3, which holds no segment: %s", f.Message)
		}
	}
	var warned bool
	for _, w := range r.Inputs[0].Warnings {
		warned = warned || strings.Contains(w, "device 3") && strings.Contains(w, "segments are taken as the truth")
	}
	if !warned {
		t.Errorf("warnings %q", r.Inputs[0].Warnings)
	}
}

// TestPendingFreeThatGrows: each of 100 steps frees a 2 MiB side-stream
// tensor (:50, freed at :52) whose stream never reaches the free: 100
// blocks pending, one from every iteration since the first, in 100
// segments: growing. When the stream catches up 20 steps later, 20 are
// pending, all from the last 20 iterations: bounded.
func TestPendingFreeThatGrows(t *testing.T) {
	for _, lag := range []int{0, 20} {
		s := newSnapBuilder()
		s.weights()
		var pend []int64
		for i := 0; i < 100; i++ {
			s.step(4)
			a := s.alloc(2<<20, userAt(50))
			s.freeRequested(a, userAt(52))
			pend = append(pend, a)
			if lag > 0 && len(pend) > lag {
				s.freeCompleted(pend[0])
				pend = pend[1:]
			}
		}
		p := one(t, analyzeJSON(t, s.write(t, 0)), "pending-free", "train.py", 50)
		want := "growing: blocks left pending in 100 of the 100 iterations since iteration 1 and never released, in 100 segments"
		if lag > 0 {
			want = "bounded: from iterations 81 to 100 of 100"
		}
		if !strings.Contains(p.Message, want) {
			t.Errorf("lag %d: %s", lag, p.Message)
		}
	}
}

// TestInnerLoopRunningTheModel: as TestInnerLoopIsNotTheStep, but every
// pass of the per-sample loop (:36) also runs a layer (an activation in a
// module call), so its gaps hold the step's compute too. The loop runs 40
// times in each of the first 46 steps and never after: nested unevenly in
// the batch's period (:20), so the batch still marks the 100 iterations and
// the cache that filled up by step 40 is retained, not a leak.
func TestInnerLoopRunningTheModel(t *testing.T) {
	s := newSnapBuilder()
	s.weights()
	layer := append(append([]snapFrame{}, moduleFrames...), userAt(37)...)
	for i := 0; i < 100; i++ {
		s.step(4)
		if i < 46 {
			for k := 0; k < 40; k++ {
				x := s.alloc(64<<10, userAt(36))
				s.free(s.alloc(128<<10, layer))
				s.free(x)
			}
		}
		if i < 40 {
			s.alloc(1<<20, userAt(31))
		}
	}
	r := analyzeJSON(t, s.write(t, 0))
	if it := r.Inputs[0].Devices[0].Iterations; it != 100 {
		t.Errorf("%d iterations, want 100", it)
	}
	if len(leaks(r)) != 0 {
		t.Errorf("leaks %+v", leaks(r))
	}
	one(t, r, "retained", "train.py", 31)
}
