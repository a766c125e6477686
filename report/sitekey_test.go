package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// trendProc is an NVML process finding: process name on GPU 0, its pid,
// when its series starts (µs) and what it holds.
func trendProc(name string, pid, startUs, bytes int64) Finding {
	return Finding{Kind: KindTrend, Source: "nvidia-smi-query-apps", GPU: ptr(0), Process: name,
		PID: ptr(pid), SeriesStartUs: ptr(startUs), Bytes: bytes, Count: 1}
}

// Two "python" processes on GPU 0 in one run are two sites: a baseline
// does not add them up, and SARIF gives them two fingerprints. Pids never
// enter the key (they change from run to run): the process that starts
// first (pid 200, at 5) keeps the plain key, the other (pid 100, at 10)
// is "process 2". Across runs, the Nth process of a name is matched with
// the Nth: BASE's pids 200 and 100 (1 GiB, 2 GiB) against NEW's pids 7001
// and 7002 (1 GiB, 3 GiB) are one site the same and one grown by 1 GiB,
// not one 3 GiB site grown to 4 GiB, and not four sites new and fixed.
func TestSiteKeysTellProcessesApart(t *testing.T) {
	const gib = 1 << 30
	base := []Finding{trendProc("python", 100, 10, 2*gib), trendProc("python", 200, 5, 1*gib)}
	keys := SiteKeys(base)
	if keys[0] == keys[1] {
		t.Fatalf("two pids, one key %q", keys[0])
	}
	if keys[1] != SiteKey(&base[1]) || keys[0] != SiteKey(&base[0])+"|process 2" {
		t.Errorf("keys %q: want the first-started plain, the other |process 2", keys)
	}
	b := NewBaseline(base, nil, nil)
	if len(b.Sites) != 2 || b.Sites[0].Bytes+b.Sites[1].Bytes != 3*gib || b.Sites[0].Bytes == 3*gib || b.Sites[1].Bytes == 3*gib {
		t.Fatalf("baseline sites %+v: want two, 1 and 2 GiB", b.Sites)
	}
	run := NewBaseline([]Finding{trendProc("python", 7002, 1_000_010, 3*gib), trendProc("python", 7001, 1_000_005, 1*gib)}, nil, nil)
	got := map[string]int64{}
	for _, e := range Compare(b, run, Tolerance{}) {
		got[e.Status] += e.DeltaBytes
		if e.Status != StatusSame && e.Status != StatusGrown {
			t.Errorf("entry %s %s", e.Status, e.Site)
		}
	}
	if len(got) != 2 || got[StatusGrown] != 1*gib || got[StatusSame] != 0 {
		t.Errorf("diff %v: want one same and one grown by 1 GiB", got)
	}

	// SARIF: one fingerprint per process.
	var buf bytes.Buffer
	if err := writeSARIF(&buf, &Report{Findings: base}, Options{}); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if rs := log.Runs[0].Results; len(rs) != 2 || rs[0].PartialFingerprints[sarifFingerprint] == rs[1].PartialFingerprints[sarifFingerprint] {
		t.Errorf("SARIF results %+v: want two fingerprints", rs)
	}

	// One process per key keys as before: no suffix, whatever its pid.
	one := []Finding{trendProc("python", 100, 10, gib), trendProc("train", 200, 5, gib)}
	if k := SiteKeys(one); k[0] != SiteKey(&one[0]) || k[1] != SiteKey(&one[1]) {
		t.Errorf("keys %q", k)
	}
}

// A site on CUDA device 0, on XPU device 0 and in host memory (an
// [OutOfMemory] event of the CPU: no index) are three sites, though the
// index (0, or none) and stack are the same: a diff of a CUDA run against
// an XPU run of the same code lists the site fixed and new, not same.
func TestSiteKeyDeviceType(t *testing.T) {
	site := Frame{Function: "train", File: "train.py", Line: 41}
	mk := func(dev *int, typ string) Finding {
		return Finding{Kind: KindLeak, Source: "pytorch-profiler-trace", Device: dev, DeviceType: typ, Site: site, Stack: []Frame{site}, Bytes: 1 << 20, Count: 1}
	}
	cuda, xpu, cpu, none := mk(ptr(0), ""), mk(ptr(0), "xpu"), mk(nil, "cpu"), mk(nil, "")
	keys := map[string]string{}
	for name, f := range map[string]Finding{"cuda:0": cuda, "xpu:0": xpu, "cpu": cpu, "no device": none} {
		k := SiteKey(&f)
		if o, ok := keys[k]; ok {
			t.Errorf("%s and %s share the key %q", name, o, k)
		}
		keys[k] = name
	}
	// CUDA keys as baselines written before device types hold them.
	if k := SiteKey(&cuda); k != "leak|dev0|train @ train.py" {
		t.Errorf("CUDA key %q", k)
	}
	statuses := map[string]int{}
	for _, e := range Compare(NewBaseline([]Finding{cuda}, nil, nil), NewBaseline([]Finding{xpu}, nil, nil), Tolerance{}) {
		statuses[e.Status]++
		if e.Status == StatusNew && e.DeviceType != "xpu" {
			t.Errorf("new entry's device type %q", e.DeviceType)
		}
	}
	if statuses[StatusFixed] != 1 || statuses[StatusNew] != 1 || len(statuses) != 2 {
		t.Errorf("CUDA vs XPU: %v, want one fixed and one new", statuses)
	}
}
