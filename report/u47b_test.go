package report

import (
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/analyze/callsite"
	"github.com/gpuleak/gpuleak/analyze/snapshot"
)

// TestSnapshotGrowthSizesTold: a site whose live memory went from 20 GiB
// to 20 GiB + 300 MiB. IBytes prints sizes of 10 units or more with no
// decimals, so both ends read "20 GiB": the message would claim growth
// between two equal sizes. 300 MiB is 0.29 GiB, so one decimal in GiB
// tells them apart: "20.0 GiB" and "20.3 GiB" (20.29 rounds to 20.3).
// The same holds for every message that names both ends of the growth:
// a leak's curve, a retained site's below --min-kept, a plateau rule's
// two halves.
func TestSnapshotGrowthSizesTold(t *testing.T) {
	const GiB, MiB = 1 << 30, 1 << 20
	from, to := int64(20*GiB), int64(20*GiB+300*MiB)
	leak := snapshot.Site{Kind: callsite.Leak, Bytes: to, Count: 10,
		Frame:  callsite.Frame{Filename: "train.py", Line: 7, Name: "step"},
		Growth: &snapshot.Growth{Measured: 8, GrewIn: 7, PerIteration: float64(300*MiB) / 7, FromBytes: from, ToBytes: to}}
	if m := siteMessage(leak, false); !strings.Contains(m, "(from 20.0 GiB to 20.3 GiB)") {
		t.Errorf("leak's growth ends not told apart: %s", m)
	}
	// Flat at 20 GiB, then growing to 20.3 GiB.
	leak.Growth.OnsetStep, leak.Growth.OnsetBytes, leak.Growth.GrewSince, leak.Growth.SinceOnset = 3, from, 5, 5
	if m := siteMessage(leak, false); !strings.Contains(m, "stayed at 20.0 GiB until iteration 3") || !strings.Contains(m, "(to 20.3 GiB)") {
		t.Errorf("onset and end not told apart: %s", m)
	}
	// The plateau rule's halves: the second half's highest above the
	// first's by 300 MiB.
	leak.Growth.StoppedStep, leak.Growth.StoppedFor, leak.Growth.FirstHalfMax, leak.Growth.SecondHalfMax = 6, 2, from, to
	if m := siteMessage(leak, false); !strings.Contains(m, "to 20.3 GiB, above the first half's highest, 20.0 GiB") {
		t.Errorf("halves not told apart: %s", m)
	}
	ret := &snapshot.Growth{Measured: 8, GrewIn: 3, Kept: 2, BelowMinKept: 4, FromBytes: from, ToBytes: to}
	if m := retainedWhy(ret); !strings.Contains(m, "went from 20.0 GiB to 20.3 GiB") {
		t.Errorf("retained growth ends not told apart: %s", m)
	}
	// Sizes IBytes already tells apart keep its rendering.
	ret.FromBytes, ret.ToBytes = 1*GiB, 3*GiB
	if m := retainedWhy(ret); !strings.Contains(m, "went from 1.0 GiB to 3.0 GiB") {
		t.Errorf("sizes told apart re-rendered: %s", m)
	}
}

// TestGateGrownSizesTold: grown>0 trips on a site that held 20 GiB in the
// baseline and 20 GiB + 300 MiB now; its why must not read "grew from 20
// GiB (...) to 20 GiB (...)": the GiB figures get the decimal that tells
// them apart (20.0, 20.3), the byte counts stay exact.
func TestGateGrownSizesTold(t *testing.T) {
	const GiB, MiB = 1 << 30, 1 << 20
	gs, err := ParseGates([]string{"grown>0"})
	if err != nil {
		t.Fatal(err)
	}
	e := DiffEntry{Status: StatusGrown, Kind: KindLeak, Site: "train.py:7", BeforeBytes: 20 * GiB, AfterBytes: 20*GiB + 300*MiB}
	res := Evaluate(gs, GateInput{Diff: []DiffEntry{e}})
	want := "grew from 20.0 GiB (21,474,836,480 bytes) to 20.3 GiB (21,789,409,280 bytes)"
	if len(res) != 1 || !res[0].Tripped || !strings.Contains(res[0].Why, want) {
		t.Errorf("got %+v, want a tripped gate saying %q", res, want)
	}
}
