package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Session 44, branch h44d (testdata/README.md, "CI gates and sniffing
// from the session-44 tester").

// A training log whose first line is a tqdm bar with commas
// (jzhang38/EasyContext#11: DeepSpeed warnings behind the bars) was taken
// for nvidia-smi CSV without a header: --fail-on oom exited 2 and JUnit
// listed it NOT READ. A log without an OOM passes with a warning, as the
// README says; so does a Python logging log ("date,ms - INFO - a, b, c"),
// which was read as --query-gpu samples and failed on its field count.
// Rows of numbers still get the header-less CSV hint (exit 2).
func TestHunt44dLogWithCommasIsALog(t *testing.T) {
	for _, path := range []string{td + "logs/easycontext11_tqdm_deepspeed.txt", td + "logs/python_logging_commas.log"} {
		code, out, errOut := run(t, nil, "analyze", "--format", "junit", "--fail-on", "oom", path)
		if code != 0 || strings.Contains(out, "NOT READ") || !strings.Contains(errOut+out, "read as a log of a run without an OOM") {
			t.Errorf("%s --fail-on oom: exit %d, output %.200q; want 0, a log without an OOM", path, code, errOut+out)
		}
	}
	rows := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(rows, []byte("0, 1024, 81920\n1, 2048, 81920\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, nil, "analyze", "--fail-on", "oom", rows); code != 2 || !strings.Contains(errOut, "--fields") {
		t.Errorf("header-less rows: exit %d, stderr %.200q; want 2 and the --fields hint", code, errOut)
	}
}

// --fail-on fragmentation is judged on every allocator statistics set the
// inputs yielded, whatever file kind carried it. It was "not judged"
// (exit 2) when the set came in an OOM message's log (a fairseq OOM line
// then its memory_summary(), 616.7 MiB non-releasable of 15.19 GiB
// reserved: no finding, as with the table alone) or as memory_stats()
// print()ed (pprint OrderedDict from ROCm/pytorch#703, and its dict repr;
// all zeros). memory_stats_json_in_log.log's dump (3 GiB non-releasable
// of 8 GiB) gave a fragmentation finding and still left the gate "not
// judged". Recorded frag_oom_error.txt's message followed by the same
// run's memory_summary() is judged and passes, as the two given as two
// files are: the table is taken at the OOM, whose cause (fragmentation +
// memory-limit) its 368 MiB reserved but unallocated explains, and no
// fragmentation finding is made of it. The message alone still cannot
// judge the gate.
func TestHunt44dFragmentationJudgedOnTablesInLogs(t *testing.T) {
	both := filepath.Join(t.TempDir(), "oom_then_summary.log")
	var b []byte
	for _, p := range []string{"pytorch/hv2/frag_oom_error.txt", "pytorch/hv2/frag_oom_memory_summary.txt"} {
		x, err := os.ReadFile(td + p)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, x...), '\n')
	}
	if err := os.WriteFile(both, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		code int
	}{
		{td + "pytorch/pastes/oom_then_summary_fairseq_asc.txt", 0},
		{td + "pytorch/pastes/stats_pprint_rocm703_full.txt", 0},
		{td + "pytorch/synthetic/stats_dict_repr_rocm703.txt", 0},
		{td + "pytorch/synthetic/memory_stats_json_in_log.log", 1},
		{both, 0},
		{td + "pytorch/hv2/frag_oom_error.txt", 2},
	} {
		code, out, errOut := run(t, nil, "analyze", "--fail-on", "fragmentation", c.path)
		if code != c.code {
			t.Errorf("%s --fail-on fragmentation: exit %d, want %d: %.200q", c.path, code, c.code, errOut+out)
		}
		if c.code != 2 && strings.Contains(errOut, "could not be judged") {
			t.Errorf("%s: the gate was not judged: %.200q", c.path, errOut)
		}
	}
}

// oom>1GiB on ROCm/TheRock#1054's 16 GiB request on a 15.24 GiB GPU (0
// bytes allocated by PyTorch) trips: the gate measures the request, as
// the Markdown table in the same output shows it. It passed (exit 0),
// saying "with no allocated memory given". oom>16GiB does not trip (16
// GiB is not above 16 GiB).
func TestHunt44dOOMSizeGateOnRequest(t *testing.T) {
	p := td + "pytorch/pastes/hip_therock1054.txt"
	code, out, errOut := run(t, nil, "analyze", "--format", "markdown", "--fail-on", "oom>1GiB", p)
	if code != 1 || !strings.Contains(out, "1 OOM requesting 16 GiB") || strings.Contains(out+errOut, "no allocated memory") {
		t.Errorf("oom>1GiB: exit %d, %.200q; want 1, 1 OOM requesting 16 GiB", code, out+errOut)
	}
	if code, _, errOut := run(t, nil, "analyze", "--fail-on", "oom>16GiB", p); code != 0 {
		t.Errorf("oom>16GiB: exit %d, %.200q; want 0", code, errOut)
	}
}

// OOMs without a stack each get a SARIF fingerprint of their own: the
// 16 GiB HIP OOM (ROCm/TheRock#1054) and the 1.70 GiB CUDA OOM
// (mgfn35) are both on GPU 0 and had one fingerprint; rl-swarm#341's two
// MPS OOMs (1.16 GB and 583.07 MB requested) had another, so code scanning
// merged them into two alerts. Now four. Analysed again, and with log
// lines added above its message, an input keeps its fingerprints: no
// line number enters them.
func TestHunt44dStacklessOOMFingerprints(t *testing.T) {
	fps := func(paths ...string) []string {
		t.Helper()
		code, out, errOut := run(t, nil, append([]string{"analyze", "--format", "sarif"}, paths...)...)
		if code != 0 {
			t.Fatalf("exit %d: %.200q", code, errOut)
		}
		var log struct {
			Runs []struct {
				Results []struct {
					PartialFingerprints map[string]string `json:"partialFingerprints"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &log); err != nil {
			t.Fatal(err)
		}
		var fs []string
		for _, r := range log.Runs[0].Results {
			fs = append(fs, r.PartialFingerprints["gpuleakSite/v1"])
		}
		sort.Strings(fs)
		return fs
	}
	paths := []string{td + "pytorch/pastes/hip_therock1054.txt", td + "pytorch/pastes/pt2.x_zero_free_split_mgfn35.txt", td + "pytorch/pastes/mps_two_ooms_rlswarm341.txt"}
	got := fps(paths...)
	if len(got) != 4 || slices.Contains(got, "") || len(slices.Compact(slices.Clone(got))) != 4 {
		t.Errorf("fingerprints %q: want 4 different", got)
	}
	if again := fps(paths...); !slices.Equal(again, got) {
		t.Errorf("analysed again: %q, was %q", again, got)
	}
	msg, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "job.log")
	if err := os.WriteFile(log, msg, 0o644); err != nil {
		t.Fatal(err)
	}
	before := fps(log)
	if err := os.WriteFile(log, append([]byte("step 1 done\nstep 2 done\nstep 3 done\n"), msg...), 0o644); err != nil {
		t.Fatal(err)
	}
	if after := fps(log); len(before) != 1 || !slices.Equal(after, before) {
		t.Errorf("log lines above the message: %q, was %q", after, before)
	}
}
