package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// The nu43 tester's dcgm_pods_job_creep.txt through the command: one
// finding for GPU 0 (was three flat ones, one per pod), a step from
// 10000 to 14096 MiB, and the pods that held the GPU in turn, with their
// first and last scrape (08:00:00-08:09:30, 08:10:00-08:19:30,
// 08:20:00-08:29:30 UTC: 20 scrapes 30 s apart each), in the message and
// in the JSON's pods.
func TestTrendDCGMPodsInTurn(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "trend", "--format", "json", "../testdata/nvml/dcgm_pods_job_creep.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %.200q", code, errOut)
	}
	var r struct {
		Findings []struct {
			Classification string `json:"classification"`
			Pod            string `json:"pod"`
			Message        string `json:"message"`
			Pods           []struct {
				Pod     string `json:"pod"`
				FirstUs int64  `json:"first_us"`
				LastUs  int64  `json:"last_us"`
				Samples int    `json:"samples"`
			} `json:"pods"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 {
		t.Fatalf("%d findings, want 1 (one GPU)", len(r.Findings))
	}
	f := r.Findings[0]
	const held = "held in turn by pods (DCGM exporter's labels) ml/job-1 from 08:00:00 UTC to 08:09:30 UTC, ml/job-2 from 08:10:00 UTC to 08:19:30 UTC, ml/job-3 from 08:20:00 UTC to 08:29:30 UTC"
	if f.Classification != "step" || f.Pod != "" || len(f.Pods) != 3 || f.Pods[1].Pod != "job-2" || f.Pods[1].FirstUs != 1764835800000000 ||
		f.Pods[1].Samples != 20 || !strings.Contains(f.Message, held) {
		t.Errorf("%s, pod %q, %d pods, message %.200q", f.Classification, f.Pod, len(f.Pods), f.Message)
	}
}

// A GPU three pods share (dcgm_shared_exported_pod.txt, issue #340's
// label form): one series of 4 scrapes named for the three workload
// pods (exported_pod), not three series named for the exporter's pod.
func TestTrendDCGMSharedGPU(t *testing.T) {
	code, out, errOut := runIO(t, "", false, "trend", "../testdata/nvml/dcgm_shared_exported_pod.txt")
	if code != ExitOK {
		t.Fatalf("exit %d: %.200q", code, errOut)
	}
	if n := strings.Count(out, "GPU 0 of worker1"); n != 1 || !strings.Contains(out, "(shared by pods default/pod1 + default/pod2 + somenamespace/pod3)") ||
		strings.Contains(out, "dcgm-exporter-dev-78z52") {
		t.Errorf("%d findings of GPU 0: %.300q", n, out)
	}
}
