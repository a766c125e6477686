package profiler

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
)

// plateauTrace writes a trace of n ProfilerStep#N spans (no Python
// frames) whose first grow steps each keep a 1 MiB aten::clone and whose
// others allocate and free one: a cache that fills, then stays (s32's
// syn/plateau10.json is n 10, grow 5; plateau20.json n 20, grow 3).
func plateauTrace(t *testing.T, n, grow int) string {
	t.Helper()
	const t0 = 1790857026000000.0
	var ev []string
	var alloc int64
	mem := func(ts float64, addr uint64, b int64) {
		alloc += b
		ev = append(ev, fmt.Sprintf(`{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":%.3f,"args":{"Total Reserved":%d,"Total Allocated":%d,"Bytes":%d,"Device Id":0,"Device Type":1,"Addr":%d}}`, ts, 512<<20, alloc, b, addr))
	}
	for k := 0; k < n; k++ {
		s := t0 + float64(k)*1000
		ev = append(ev, fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%.3f,"dur":900,"args":{}}`, k+1, s))
		ev = append(ev, fmt.Sprintf(`{"ph":"X","cat":"cpu_op","name":"aten::clone","pid":1,"tid":1,"ts":%.3f,"dur":100,"args":{}}`, s+300))
		addr := 0x7f1000000000 + uint64(k)<<21
		mem(s+350, addr, 1<<20)
		if k >= grow {
			mem(s+600, addr, -(1 << 20))
		}
	}
	doc := `{"schemaVersion": 1, "profile_memory": 1, "traceEvents": [` + strings.Join(ev, ",\n") + `]}`
	p := filepath.Join(t.TempDir(), "plateau.trace.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A cache that fills up and then stays is judged by one rule, the plateau
// rule of snapshots (analyze/snapshot's judge), whatever the run's length:
// it is bounded (retained, with the iteration of its plateau) when its live
// bytes stopped rising in the first half of the measured iterations, and a
// leak when they still rose in the second half. Such a leak's Growth says
// when it stopped (StoppedStep), for how many measured iterations, flat,
// and the halves' highest bytes the rule compared, so that its message can
// say "grew in 5 of 9 iterations, then flat in the last 4" rather than
// "keeps growing". s32: plateau10 (5 of 9 rising) was a leak "keeps
// growing", plateau20 (3 of 19) retained.
func TestPlateauOneRule(t *testing.T) {
	for _, c := range []struct {
		n, grow   int
		leak      bool
		stopped   int // StoppedStep of the leak, PlateauStep when retained
		for_      int
		fst, snd  int64 // the halves' highest, MiB
		grewIn, m int
	}{
		{10, 5, true, 6, 4, 4, 5, 5, 9},
		{10, 4, false, 5, 0, 0, 0, 4, 9},
		{20, 3, false, 4, 0, 0, 0, 3, 19},
		{20, 10, true, 11, 9, 9, 10, 10, 19},
		{20, 9, false, 10, 0, 0, 0, 9, 19},
	} {
		res := kinetoResult(t, plateauTrace(t, c.n, c.grow))
		if len(res.Leak.Sites) != 1 {
			t.Fatalf("n %d grow %d: %d sites", c.n, c.grow, len(res.Leak.Sites))
		}
		s := res.Leak.Sites[0]
		g := s.Growth
		if (s.Kind == callsite.Leak) != c.leak || g == nil || g.GrewIn != c.grewIn || g.Measured != c.m {
			t.Errorf("n %d grow %d: %s, growth %+v; want leak %v, grew in %d of %d", c.n, c.grow, s.Kind, g, c.leak, c.grewIn, c.m)
			continue
		}
		if !c.leak {
			if g.PlateauStep != c.stopped || g.StoppedStep != 0 {
				t.Errorf("n %d grow %d: plateau %d, stopped %d; want plateau %d", c.n, c.grow, g.PlateauStep, g.StoppedStep, c.stopped)
			}
			continue
		}
		if g.StoppedStep != c.stopped || g.StoppedFor != c.for_ || !g.StoppedFlat || g.FirstHalfMax != c.fst<<20 || g.SecondHalfMax != c.snd<<20 {
			t.Errorf("n %d grow %d: stopped %d for %d flat %v, halves %d %d; want %d for %d, %d %d MiB", c.n, c.grow,
				g.StoppedStep, g.StoppedFor, g.StoppedFlat, g.FirstHalfMax, g.SecondHalfMax, c.stopped, c.for_, c.fst, c.snd)
		}
	}
	// A leak that keeps growing has no stop: the ten-step clone of
	// stepTrace rises in every iteration.
	res := kinetoResult(t, stepTrace(t, 10, true, false, false))
	if ls := kinetoLeaks(res); len(ls) != 1 || ls[0].Growth.StoppedStep != 0 {
		t.Errorf("growing leak: %+v", ls)
	}
}
