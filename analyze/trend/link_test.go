package trend

import (
	"math/rand"
	"testing"
)

// TestLinkAgainstPairwise: link's grouping (by UUID, then by host and
// index through one series per UUID and input span) puts the same series
// together as comparing every pair did, on random series: hosts, indexes
// or none, UUIDs or none, spans that overlap, coincide or are empty.
func TestLinkAgainstPairwise(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for round := 0; round < 300; round++ {
		a := &Analyzer{}
		n := 1 + rng.Intn(40)
		spans := [][2]int64{{0, 100}, {50, 150}, {200, 300}, {0, 100}, {400, 300}}
		for i := 0; i < n; i++ {
			sp := spans[rng.Intn(len(spans))]
			s := &series{key: seriesKey{
				host:   []string{"a", "b"}[rng.Intn(2)],
				uuid:   []string{"", "", "GPU-1", "GPU-2"}[rng.Intn(4)],
				gpu:    int32(rng.Intn(3)),
				hasGPU: rng.Intn(4) != 0,
				hasPID: rng.Intn(2) == 0,
				pid:    int64(i),
			}, gpuName: []string{"", "A100", "H100"}[rng.Intn(3)], inputStartUs: sp[0], inputEndUs: sp[1]}
			a.order = append(a.order, s)
		}
		a.link()
		want := pairwiseGroups(a.order)
		for i := range a.order {
			for j := range a.order {
				if got := a.order[i].group == a.order[j].group; got != (want[i] == want[j]) {
					t.Fatalf("round %d: series %d %+v and %d %+v together %v, pairwise %v", round, i, a.order[i].key, j, a.order[j].key, got, !got)
				}
			}
		}
		procs, gpus := 0, 0
		for _, ss := range a.procsIn {
			procs += len(ss)
		}
		for _, ss := range a.gpusIn {
			gpus += len(ss)
		}
		if procs+gpus != n {
			t.Fatalf("round %d: %d process and %d GPU series indexed, of %d", round, procs, gpus, n)
		}
	}
}

// pairwiseGroups is link as it was: every pair compared.
func pairwiseGroups(order []*series) []int {
	parent := make([]int, len(order))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	for i, x := range order {
		for j := i + 1; j < len(order); j++ {
			y := order[j]
			same := x.key.uuid != "" && x.key.uuid == y.key.uuid
			if !same && x.key.hasGPU && y.key.hasGPU && x.key.gpu == y.key.gpu && x.key.host == y.key.host &&
				(x.key.uuid == "" || y.key.uuid == "" || x.key.uuid == y.key.uuid) &&
				(x.gpuName == "" || y.gpuName == "" || x.gpuName == y.gpuName) &&
				x.inputStartUs <= y.inputEndUs && y.inputStartUs <= x.inputEndUs {
				same = true
			}
			if same {
				parent[find(i)] = find(j)
			}
		}
	}
	g := make([]int, len(order))
	for i := range g {
		g[i] = find(i)
	}
	return g
}

// TestLinkKeepsNamedGPUsApart: two logs of GPU index 0 on hosts neither
// names, over the same hours, one with UUIDs (an A100) and one without
// (an H100), are two GPUs; a third without a UUID or a name is either.
func TestLinkKeepsNamedGPUsApart(t *testing.T) {
	mk := func(uuid, name string) *series {
		return &series{key: seriesKey{uuid: uuid, gpu: 0, hasGPU: true}, gpuName: name, inputStartUs: 0, inputEndUs: 100}
	}
	a := &Analyzer{order: []*series{mk("GPU-1", "NVIDIA A100-SXM4-80GB"), mk("", "NVIDIA H100 80GB HBM3"), mk("", "NVIDIA A100-SXM4-80GB")}}
	a.link()
	if a.order[0].group == a.order[1].group {
		t.Error("an A100's series and an H100's were linked by their index")
	}
	if a.order[0].group != a.order[2].group {
		t.Error("an A100's series with its UUID and one without were not linked")
	}
}
