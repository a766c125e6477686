package trend

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// warmSpiky is 700 samples 10 s apart (1.9 h) with ±150 MiB of uniform
// jitter from seed (σ 87 MiB, as in the session-43 tester's
// warmup80_flat_spikes_growing.csv): a warm-up that climbs from 300 MiB
// to 18500 MiB over its first warm samples, then 18500 MiB rising leak
// MiB a sample, with a spike of h MiB for 3 samples in every 40 after the
// warm-up (none when h is 0).
func warmSpiky(warm int, h, leak float64, seed uint64) synth {
	return jittered(700, 150, seed, func(i int) float64 {
		if i < warm {
			return 300 + 18200*float64(i)/float64(warm)
		}
		v := 18500 + leak*float64(i-warm)
		if k := i - warm; k > 0 && k%40 < 3 {
			v += h
		}
		return v
	})
}

// The session-43 tester's log (testdata/README.md, h44_warmup_flat_spikes.csv):
// used memory climbs from 329 to 18568 MiB over the first 81 samples,
// then holds 18485-18802 MiB to the end (1.7 h) but for 15 spikes of
// about 10 GiB, 3 samples each. The lowest sample between spikes never
// leaves 18485-18560 MiB: the only rise of the floor is the warm-up's,
// before anything was given back. Before session 44 the first cycle's
// floor (329 MiB, the log's first sample) pulled the floors' Theil–Sen
// slope above zero: "growing: a floor that rises 20 MiB/h".
func TestHunt44WarmUpPlateauSpikes(t *testing.T) {
	got := trends(t, "h44_warmup_flat_spikes.csv")
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	if s := got[0]; s.Class == Growing {
		t.Errorf("%s (rising floor %v) at %.1f MiB/h, want not growing", s.Class, s.RisingFloor, s.Slope*3600/mib)
	}
}

// A warm-up (20, 80 or 200 samples) then a plateau under spikes of 1, 4
// or 10 GiB is not growing, whatever the seed; the same with a leak of 2
// MiB a sample (12 MiB/min, 1240 MiB after the warm-up: growing with no
// spikes, as the first check asserts) is growing at 12 MiB/min or at the
// rate fitted without the spikes, within 10% (the floor's slope, or the
// samples' with the spikes given back). (A warm-up of 200 samples, 28% of
// the log, is not cut off the samples' fit: its end raises their rate to
// about 14 MiB/min, spikes or not; the floor's fit starts after it.) Before session 44
// the 10 GiB spikes made a plateau "growing" in 3 of these 30 logs (the
// warm-up's floor), and the 1 and 4 GiB spikes hid the leak in 16 of 60
// (their residuals failed the line's fit; a spike where the ramp's levels
// meet made a shift look like a step).
func TestHunt44WarmUpSpikesSeeded(t *testing.T) {
	for _, warm := range []int{20, 80, 200} {
		for seed := uint64(1); seed <= 10; seed++ {
			clean := analyzeOne(t, warmSpiky(warm, 0, 2, seed), Options{})
			if clean.Class != Growing {
				t.Fatalf("warm-up %d, seed %d, no spikes: leak %s, want growing", warm, seed, clean.Class)
			}
			for _, h := range []float64{1024, 4096, 10240} {
				name := fmt.Sprintf("warm-up %d, spikes %g MiB, seed %d", warm, h, seed)
				if got := analyzeOne(t, warmSpiky(warm, h, 0, seed), Options{}); got.Class == Growing {
					t.Errorf("%s: plateau growing at %.1f MiB/h (rising floor %v)", name, got.Slope*3600/mib, got.RisingFloor)
				}
				got := analyzeOne(t, warmSpiky(warm, h, 2, seed), Options{})
				if got.Class != Growing || !within(got.Slope, 0.2*mib, 0.1) && !within(got.Slope, clean.Slope, 0.1) {
					t.Errorf("%s: leak %s at %.1f MiB/min, want growing at %.1f (no spikes)", name, got.Class, got.Slope*60/mib, clean.Slope*60/mib)
				}
			}
		}
	}
}

// stepSpiky is 600 samples 10 s apart (100 min) at 20480 MiB, 4096 MiB
// higher from sample 300 on, with a spike of h MiB for samples 30-32 of
// every 60 (10 spikes) and ±4 MiB of uniform jitter from seed.
func stepSpiky(h float64, seed uint64) synth {
	return jittered(600, 4, seed, func(i int) float64 {
		v := 20480.0
		if i >= 300 {
			v += 4096
		}
		if i%60 >= 30 && i%60 < 33 {
			v += h
		}
		return v
	})
}

// A step of 4 GiB under 10 spikes of 256 or 1024 MiB (3 samples each,
// memory back where it was after each) is one step, at sample 300: each
// spike is two changes, both transient, 20 in all. Before session 44
// every spike's rise and fall counted as steps: "from 20 GiB to 24 GiB in
// 21 steps between 09:04:50 and 10:35:30", the span of the spikes.
func TestHunt44SpikesAreNoSteps(t *testing.T) {
	for _, h := range []float64{256, 1024} {
		for seed := uint64(1); seed <= 10; seed++ {
			got := analyzeOne(t, stepSpiky(h, seed), Options{})
			steps := Steps(got.ChangePoints)
			if got.Class != Step || len(steps) != 1 || len(got.ChangePoints)-len(steps) != 20 {
				t.Errorf("spikes %g MiB, seed %d: %s, %d changes, %d steps; want a step, 21 changes, 1 step",
					h, seed, got.Class, len(got.ChangePoints), len(steps))
				continue
			}
			if c := steps[0]; c.EndUs != t0+300*10e6 || c.FromBytes/mib < 20480-4 || c.ToBytes/mib < 24576-4 {
				t.Errorf("spikes %g MiB, seed %d: step %+v, want 20480 to 24576 MiB at sample 300", h, seed, c)
			}
			if got.StepAtEnd || got.TailSlope != 0 {
				t.Errorf("spikes %g MiB, seed %d: at end %v, tail slope %g; want flat after the step", h, seed, got.StepAtEnd, got.TailSlope)
			}
		}
	}
}

// h44_dcgm_exporter_restart.txt (testdata/README.md): two T4s of one node
// scraped every 30 s for 30 min from a DCGM exporter whose Hostname is its
// own pod (nvidia-dcgm-exporter-cwbcm, then, from the 31st scrape on,
// nvidia-dcgm-exporter-x7k2p: restarted). GPU 0 rises 50 MiB a scrape
// from 2000 MiB (1.67 MiB/s), GPU 1 holds 6000 MiB. Each UUID is one GPU:
// two series of 60 samples, GPU 0 growing at 50/30 MiB/s, GPU 1 flat, and
// a warning naming both hosts. Before session 44 each GPU was split in two
// series of 30 samples, one per exporter pod.
func TestHunt44DCGMExporterRestart(t *testing.T) {
	a := NewAnalyzer(Options{})
	readNVML(t, a, "../../testdata/nvml/h44_dcgm_exporter_restart.txt")
	res := a.Finalize()
	if len(res.Series) != 2 {
		t.Fatalf("%d series, want 2 (one a GPU)", len(res.Series))
	}
	g0, g1 := res.Series[0], res.Series[1]
	if g0.GPU != 0 || g0.Samples != 60 || g0.Class != Growing || !within(g0.Slope, 50.0*mib/30, 0.01) {
		t.Errorf("GPU %d: %d samples, %s at %.2f MiB/s; want GPU 0, 60, growing at 1.67", g0.GPU, g0.Samples, g0.Class, g0.Slope/mib)
	}
	if g1.GPU != 1 || g1.Samples != 60 || g1.Class != Flat {
		t.Errorf("GPU %d: %d samples, %s; want GPU 1, 60, flat", g1.GPU, g1.Samples, g1.Class)
	}
	var warned int
	for _, ws := range res.InputWarnings {
		for _, w := range ws {
			if strings.Contains(w, "nvidia-dcgm-exporter-cwbcm, nvidia-dcgm-exporter-x7k2p") {
				warned++
			}
		}
	}
	if warned != 2 {
		t.Errorf("%d warnings name both hosts, want 2 (a GPU each): %v", warned, res.InputWarnings)
	}
}

// One UUID under two hosts at the same times (two machines' logs joined)
// is not a rename: two series, no warning; the same rows with the hosts
// in turn are one. A masked UUID (GPU-********, as pasted in
// NVIDIA/dcgm-exporter#512) names no GPU: two hosts in turn stay two
// series.
func TestHunt44SameUUIDOverlappingHostsApart(t *testing.T) {
	const real = "GPU-4c226d4d-8129-a7cf-fecd-daa9018b4b48"
	line := func(b *strings.Builder, uuid, host string, i int) {
		fmt.Fprintf(b, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=%q,modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=%q} %d %d\n",
			uuid, host, 1000+10*i, 1764835200000+int64(i)*30000)
	}
	var both, turn, masked strings.Builder
	for i := range 20 {
		line(&both, real, "node-a", i)
		line(&both, real, "node-b", i)
		h := "node-a"
		if i >= 10 {
			h = "node-b"
		}
		line(&turn, real, h, i)
		line(&masked, "GPU-********", h, i)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		series     int
	}{{"both.txt", both.String(), 2}, {"turn.txt", turn.String(), 1}, {"masked.txt", masked.String(), 2}} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		a := NewAnalyzer(Options{})
		readNVML(t, a, p)
		res := a.Finalize()
		if len(res.Series) != c.series || c.series == 2 && len(res.InputWarnings) != 0 {
			t.Errorf("%s: %d series, warnings %v; want %d", c.name, len(res.Series), res.InputWarnings, c.series)
		}
	}
}

// wellFormedUUID: NVML's GPU UUIDs, with a MIG instance's suffix, are;
// masked, short or made-up ones are not.
func TestHunt44WellFormedUUID(t *testing.T) {
	for u, want := range map[string]bool{
		"GPU-4c226d4d-8129-a7cf-fecd-daa9018b4b48":         true,
		"GPU-4C226D4D-8129-A7CF-FECD-DAA9018B4B48/3":       true,
		"MIG-GPU-4c226d4d-8129-a7cf-fecd-daa9018b4b48/1/0": true,
		"MIG-c8c4d2a5-0b5e-5e4f-9d4c-3c1a2b3c4d5e":         true,
		"GPU-********": false,
		"GPU-<UUID>":   false,
		"GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": false,
		"GPU-p0":                               false,
		"":                                     false,
		"4c226d4d-8129-a7cf-fecd-daa9018b4b48": false,
	} {
		if got := wellFormedUUID(u); got != want {
			t.Errorf("wellFormedUUID(%q) = %v, want %v", u, got, want)
		}
	}
}

// A --query-gpu log and a --query-compute-apps log whose UUIDs were
// masked alike (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx on both GPUs and
// both processes): nothing ties a process to either GPU. Before session
// 44 the shared UUID linked all four series, and both processes were
// told "on GPU 1" (the last GPU of the group); now neither has a GPU
// index.
func TestHunt44MaskedUUIDLinksNothing(t *testing.T) {
	const masked = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
	var g, p strings.Builder
	g.WriteString("timestamp, index, uuid, name, memory.used [MiB], memory.total [MiB]\n")
	p.WriteString("timestamp, gpu_uuid, pid, process_name, used_memory [MiB]\n")
	for i := range 30 {
		ts := fmt.Sprintf("2026/12/01 09:%02d:%02d.000", i/6, i%6*10)
		fmt.Fprintf(&g, "%s, 0, %s, NVIDIA A100-SXM4-40GB, 10000 MiB, 40960 MiB\n", ts, masked)
		fmt.Fprintf(&g, "%s, 1, %s, NVIDIA A100-SXM4-40GB, 20000 MiB, 40960 MiB\n", ts, masked)
		fmt.Fprintf(&p, "%s, %s, 111, python, 9500 MiB\n", ts, masked)
		fmt.Fprintf(&p, "%s, %s, 222, python, 19500 MiB\n", ts, masked)
	}
	dir := t.TempDir()
	a := NewAnalyzer(Options{})
	for name, text := range map[string]string{"gpu.csv": g.String(), "apps.csv": p.String()} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		readNVML(t, a, path)
	}
	procs := 0
	for _, s := range a.Finalize().Series {
		if s.HasPID {
			procs++
			if s.HasGPU {
				t.Errorf("pid %d: on GPU %d, want no GPU index (masked UUID)", s.PID, s.GPU)
			}
		}
	}
	if procs != 2 {
		t.Errorf("%d processes, want 2", procs)
	}
	for u, want := range map[string]bool{
		masked: true, "GPU-********": true, "GPU-<UUID>": true, "GPU-4c226d4d-...": true,
		"GPU-4c226d4d-8129-a7cf-fecd-daa9018b4b48": false, "GPU-p0": false, "GPU-xeon": false,
	} {
		if got := maskedUUID(u); got != want {
			t.Errorf("maskedUUID(%q) = %v, want %v", u, got, want)
		}
	}
}
