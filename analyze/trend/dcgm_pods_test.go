package trend

import (
	"slices"
	"testing"
)

// testdata/nvml/dcgm_pods_job_creep.txt (the nu43 tester's): one GPU
// (GPU-p0) whose FB_USED is 10000, then 12048, then 14096 MiB while the
// exporter's pod label goes job-1, job-2, job-3, 20 scrapes each, 30 s
// apart from 1764835200000 ms (08:00:00 UTC). The framebuffer is the
// GPU's: one series of 60 samples, that steps up 4 GiB and keeps it, with
// who held it when. The old analyzer keyed series by pod: three flat
// series, the 4 GiB no pod gave back hidden.
func TestDCGMPodChangesOneSeries(t *testing.T) {
	got := trends(t, "dcgm_pods_job_creep.txt")
	if len(got) != 1 {
		t.Fatalf("%d series, want 1 (one GPU)", len(got))
	}
	s := got[0]
	const t0, step = int64(1764835200000000), int64(30e6)
	want := []PodSpan{
		{Pod: "job-1", Namespace: "ml", Container: "main", FirstUs: t0, LastUs: t0 + 19*step, Samples: 20},
		{Pod: "job-2", Namespace: "ml", Container: "main", FirstUs: t0 + 20*step, LastUs: t0 + 39*step, Samples: 20},
		{Pod: "job-3", Namespace: "ml", Container: "main", FirstUs: t0 + 40*step, LastUs: t0 + 59*step, Samples: 20},
	}
	if s.Samples != 60 || s.Class != Step || s.FirstBytes != 10000<<20 || s.LastBytes != 14096<<20 ||
		s.Pod != "" || !slices.Equal(s.Pods, want) {
		t.Errorf("%d samples, %s, %d to %d bytes, pod %q, pods %+v", s.Samples, s.Class, s.FirstBytes, s.LastBytes, s.Pod, s.Pods)
	}
}
