package trend

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// benchSlopes are the slopes of a 512-point fit (the most fitTheilSen
// sees) of a nearly straight series: distinct values in a patterned order.
func benchSlopes() []float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 512)
	y := make([]float64, 512)
	for i := range x {
		x[i] = float64(i)*0.25 + rng.Float64()*1e-3
		y[i] = float64(i) * mib * (1 + 1e-9*rng.Float64())
	}
	var s []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			s = append(s, (y[j]-y[i])/(x[j]-x[i]))
		}
	}
	return s
}

// BenchmarkSortSlopes is what fitTheilSen did before selection: a sort;
// BenchmarkSelectSlopes is the selection of the three order statistics.
func BenchmarkSortSlopes(b *testing.B) {
	s := benchSlopes()
	a := make([]float64, len(s))
	for i := 0; i < b.N; i++ {
		copy(a, s)
		sort.Float64s(a)
	}
}

func BenchmarkSelectSlopes(b *testing.B) {
	s := benchSlopes()
	a := make([]float64, len(s))
	for i := 0; i < b.N; i++ {
		copy(a, s)
		medianSelect(a)
		orderStat(a, len(a)/2, len(a)/2-400)
		orderStat(a, len(a)/2, len(a)/2+400)
	}
}

// benchSeries is a 512-point nearly straight series, the largest fit.
func benchSeries() (x, y []float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, y = make([]float64, 512), make([]float64, 512)
	for i := range x {
		x[i] = float64(i)*0.25 + rng.Float64()*1e-3
		y[i] = float64(i) * mib * (1 + 1e-9*rng.Float64())
	}
	return x, y
}

// BenchmarkTheilSenBanded is fitTheilSen's slope and interval on 512
// points; BenchmarkTheilSenAll the same from every slope kept.
func BenchmarkTheilSenBanded(b *testing.B) {
	x, y := benchSeries()
	for i := 0; i < b.N; i++ {
		if _, ok := slopesBanded(x, y, 7570); !ok {
			b.Fatal("no band")
		}
	}
}

func BenchmarkTheilSenAll(b *testing.B) {
	x, y := benchSeries()
	for i := 0; i < b.N; i++ {
		slopesAll(x, y, 7570)
	}
}
