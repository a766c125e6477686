package nvml

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// DCGM's framebuffer metrics are the whole GPU's: when the pod labels
// change between scrapes without timestamps (job-1's pod ends, job-2's
// is given the GPU), the GPU is still one, and each scrape one sample.
// The old reader keyed rows by pod: a line of job-2 was no series seen
// again, so all three scrapes fell into the first (three rows at 0 s).
func TestDCGMPodLabelsChangeBetweenScrapes(t *testing.T) {
	var in strings.Builder
	for k, used := range []int{10000, 12048, 14096} {
		labels := fmt.Sprintf(`gpu="0",UUID="GPU-p0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node1",container="main",namespace="ml",pod="job-%d"`, k+1)
		fmt.Fprintf(&in, "DCGM_FI_DEV_FB_USED{%s} %d\nDCGM_FI_DEV_FB_FREE{%s} %d\n", labels, used, labels, 81420-used)
	}
	rows, _, err := readRows(t, "pods.prom", in.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3 (one a scrape)", len(rows))
	}
	for k, r := range rows {
		// Scrape k at k × 30 s (the default period), held by job-(k+1).
		used := int64(10000 + 2048*k)
		if r.TimeUs != int64(k)*30e6 || r.Pod != fmt.Sprintf("job-%d", k+1) || r.Namespace != "ml" ||
			val(r.Used) != mib(used) || val(r.Free) != mib(81420-used) {
			t.Errorf("scrape %d: t %d pod %q ns %q used %d free %d", k, r.TimeUs, r.Pod, r.Namespace, val(r.Used), val(r.Free))
		}
	}
}

// A GPU shared by pods (time-slicing): the exporter writes the GPU's
// reading once for each pod. testdata/nvml/dcgm_shared_exported_pod.txt
// is in the label form of NVIDIA/dcgm-exporter issue #340 (Prometheus
// with honorLabels off: the workload's labels are exported_pod, ...,
// and pod is the exporter's own pod). Each scrape is one sample of the
// GPU naming the three pods; the old reader made three rows a scrape,
// each named for the exporter's pod.
func TestDCGMSharedGPUIsOneSample(t *testing.T) {
	data, err := os.ReadFile("../../testdata/nvml/dcgm_shared_exported_pod.txt")
	if err != nil {
		t.Fatal(err)
	}
	rows, meta, err := readRows(t, "shared.prom", string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || meta.Instants != 4 {
		t.Fatalf("%d rows in %d scrapes, want 4 in 4", len(rows), meta.Instants)
	}
	for k, r := range rows {
		used := int64(8000 + 200*k) // the file's rule
		if r.TimeUs != int64(k)*30e6 || r.UUID != "GPU-longgui" || val(r.Used) != mib(used) || val(r.Free) != mib(24564-used) ||
			r.Pod != "pod1,pod2,pod3" || r.Namespace != "default,default,somenamespace" ||
			r.Container != "ai-artifactory-control,somecontainer,runner" {
			t.Errorf("scrape %d: t %d uuid %q used %d pod %q ns %q ctr %q", k, r.TimeUs, r.UUID, val(r.Used), r.Pod, r.Namespace, r.Container)
		}
	}
}

// One GPU, one time, two FB_USED values: the first is kept and the
// other said, not one of them silently (the old reader kept the last).
func TestDCGMOneGPUTwoReadings(t *testing.T) {
	in := "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 100 1000\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 300 1000\n"
	rows, meta, err := readRows(t, "two.prom", in)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(meta.Warnings.Strings(), "\n")
	if len(rows) != 1 || val(rows[0].Used) != mib(100) || !strings.Contains(w, "line 2") || !strings.Contains(w, "300 where an earlier line gave 100") {
		t.Errorf("%d rows, used %d, warnings %.200q", len(rows), val(rows[0].Used), w)
	}
}

// A GPU 20 pods share, two scrapes: one sample a scrape naming the first
// 16 pods (maxRowPods), and one warning for the input, not one a line.
func TestDCGMManyPodsShareOneGPU(t *testing.T) {
	var in strings.Builder
	for range 2 {
		for p := range 20 {
			fmt.Fprintf(&in, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",namespace=\"ns\",pod=\"p%d\"} 500\n", p)
		}
	}
	rows, meta, err := readRows(t, "many.prom", in.String())
	if err != nil {
		t.Fatal(err)
	}
	w := meta.Warnings.Strings()
	if len(rows) != 2 || strings.Count(rows[0].Pod, ",") != 15 || !strings.Contains(rows[1].Pod, ",p15,") || strings.Contains(rows[1].Pod, "p16") || len(w) != 2 || !strings.Contains(w[1], "more than 16 pods") {
		t.Errorf("%d rows, pod %.200q, warnings %.200q", len(rows), rows[0].Pod, w)
	}
}
