package trend

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// changePointsScan is changePoints as it was before its heap: every
// segment scanned for the greatest gain (the first among equals) at each
// split. changePoints must find the very same change points.
func changePointsScan(y []float64, penalty, minJump float64, maxChanges int) []int {
	n := len(y)
	s1 := make([]float64, n+1)
	s2 := make([]float64, n+1)
	for i, v := range y {
		s1[i+1] = s1[i] + v
		s2[i+1] = s2[i] + v*v
	}
	sse := func(a, b int) float64 {
		m := float64(b - a)
		s := s1[b] - s1[a]
		return math.Max(0, s2[b]-s2[a]-s*s/m)
	}
	mean := func(a, b int) float64 { return (s1[b] - s1[a]) / float64(b-a) }
	type seg struct {
		a, b  int
		split int
		gain  float64
	}
	best := func(a, b int) seg {
		sg := seg{a: a, b: b, split: -1}
		total := sse(a, b)
		for k := a + 1; k < b; k++ {
			if math.Abs(mean(k, b)-mean(a, k)) < minJump {
				continue
			}
			if g := total - sse(a, k) - sse(k, b); g > sg.gain {
				sg.gain, sg.split = g, k
			}
		}
		return sg
	}
	segs := []seg{best(0, n)}
	var cps []int
	for len(cps) < maxChanges {
		bi := -1
		for i, s := range segs {
			if s.split >= 0 && s.gain > penalty && (bi < 0 || s.gain > segs[bi].gain) {
				bi = i
			}
		}
		if bi < 0 {
			break
		}
		s := segs[bi]
		cps = append(cps, s.split)
		segs[bi] = best(s.a, s.split)
		segs = append(segs, best(s.split, s.b))
	}
	sort.Ints(cps)
	return cps
}

// Series of whole-MiB levels (many equal gains: a ramp's steps, repeated
// sawtooth teeth), noise and steps, at the sizes fits meet.
func TestChangePointsAgainstScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	gens := map[string]func(i int) float64{
		"ramp":     func(i int) float64 { return float64(i) * mib },
		"sawtooth": func(i int) float64 { return float64(i%16) * 4 * mib },
		"steps":    func(i int) float64 { return float64(i/40) * 64 * mib },
		"noise":    func(i int) float64 { return rng.NormFloat64() * mib },
		"levels":   func(i int) float64 { return float64(rng.IntN(4)) * 32 * mib },
		"flat":     func(i int) float64 { return 5 * mib },
	}
	for name, gen := range gens {
		for _, n := range []int{3, 10, 100, 512} {
			y := make([]float64, n)
			for i := range y {
				y[i] = gen(i)
			}
			for _, maxChanges := range []int{1, 5, 256} {
				penalty := 3 * mib / 4 * mib * math.Log(float64(n))
				got := changePoints(y, penalty, mib, maxChanges)
				want := changePointsScan(y, penalty, mib, maxChanges)
				if !slices.Equal(got, want) {
					t.Errorf("%s, %d points, %d changes: %v, the scan %v", name, n, maxChanges, got, want)
				}
			}
		}
	}
}

// FuzzChangePoints: series of up to 300 points from few or many levels.
func FuzzChangePoints(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint16(200), uint8(10))
	f.Add(uint64(2), uint8(0), uint16(64), uint8(255))
	f.Fuzz(func(t *testing.T, seed uint64, kind uint8, n uint16, maxChanges uint8) {
		if n < 1 || n > 300 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, uint64(kind)))
		y := make([]float64, n)
		levels := 1 + int(kind&15)
		for i := range y {
			y[i] = float64(rng.IntN(levels))*mib + float64(i)*float64(kind>>4)*mib
		}
		penalty := 3 * mib / 4 * mib * math.Log(float64(n))
		got := changePoints(y, penalty, mib, int(maxChanges))
		if want := changePointsScan(y, penalty, mib, int(maxChanges)); !slices.Equal(got, want) {
			t.Fatalf("%v, the scan %v", got, want)
		}
	})
}
