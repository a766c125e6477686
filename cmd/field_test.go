package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// fieldDir holds public snapshots other people committed to GitHub; they
// are read in place, never copied into the repository.
const fieldDir = "../../shared/field/snapshots"

// machineSite matches sites named by the machinery rather than the
// program: CPython's C frames, a thread's start, the allocator's empty_*
// kernels, PyTorch's own files and torch.compile's generated code (on any
// OS).
var machineSite = regexp.MustCompile(`^(cfunction_call|cfunction_vectorcall|method_vectorcall|slot_tp_call|vectorcall_|_PyEval|_PyObject|PyObject_|execute_native_thread_routine|at::native::empty|at::detail::empty)`)
var machineFile = regexp.MustCompile(`[/\\]torch[/\\]|torchinductor_|[/\\]Include[/\\]|[/\\]Python[/\\]ceval`)

// TestFieldSnapshots checks every public snapshot against what its data
// shows, worked out with Python's pickle by testdata/gen/field_facts.py
// (testdata/field_facts.json): the report's devices, active and
// pending-free bytes and blocks are the snapshot's; the findings account
// for every one of those bytes; none of these runs holds a planted leak and
// none of their traces shows memory growing across iterations, so no leak
// of 4 MiB or more is reported; the peak within the trace (the most
// allocated at once, where above the end) and its entry are the trace's;
// no site is named by a framework,
// interpreter or generated-code frame; at most 40 findings per file; a
// trace without allocations, or without a repeating step, says so.
func TestFieldSnapshots(t *testing.T) {
	if _, err := os.Stat(fieldDir); err != nil {
		t.Skipf("the public snapshots are not here (%v)", err)
	}
	raw, err := os.ReadFile(td + "field_facts.json")
	if err != nil {
		t.Fatal(err)
	}
	type devFacts struct {
		ActiveBytes   int64 `json:"active_bytes"`
		ActiveBlocks  int   `json:"active_blocks"`
		PendingBytes  int64 `json:"pending_bytes"`
		PendingBlocks int   `json:"pending_blocks"`
		Segments      int   `json:"segments"`
		ReservedBytes int64 `json:"reserved_bytes"`
		TraceEntries  int64 `json:"trace_entries"`
		Allocs        int   `json:"allocs"`
		PeakBytes     int64 `json:"peak_bytes"`
		PeakSeq       int64 `json:"peak_seq"`
	}
	var facts map[string]map[string]devFacts
	if err := json.Unmarshal(raw, &facts); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(fieldDir, "*"))
	if len(names) != len(facts) {
		t.Errorf("%d snapshots, facts for %d (rerun testdata/gen/field_facts.py)", len(names), len(facts))
	}
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			want, ok := facts[name]
			if !ok {
				t.Fatalf("no facts for %s", name)
			}
			code, out, errOut := run(t, nil, "analyze", "--format", "json", "--top", "0", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var r struct {
				Inputs []struct {
					Devices []struct {
						Device            int   `json:"device"`
						ActiveBytes       int64 `json:"active_bytes"`
						ActiveBlocks      int   `json:"active_blocks"`
						PendingFreeBytes  int64 `json:"pending_free_bytes"`
						PendingFreeBlocks int   `json:"pending_free_blocks"`
						Segments          int   `json:"segments"`
						ReservedBytes     int64 `json:"reserved_bytes"`
						TraceEntries      int64 `json:"trace_entries"`
						Iterations        int   `json:"iterations"`
						PeakActiveBytes   int64 `json:"peak_active_bytes"`
						PeakSeq           int64 `json:"peak_seq"`
					} `json:"devices"`
					Warnings []string `json:"warnings"`
				} `json:"inputs"`
				Findings      []verdictFinding `json:"findings"`
				FindingsTotal int              `json:"findings_total"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			in := r.Inputs[0]
			if len(in.Devices) != len(want) {
				t.Errorf("%d devices, the snapshot has %d", len(in.Devices), len(want))
			}
			held := map[int]int64{}
			for _, f := range r.Findings {
				switch f.Kind {
				case "leak", "live", "retained", "pending-free":
					held[*f.Device] += f.Bytes
				}
				if f.Kind == "leak" && f.Bytes >= 4<<20 {
					t.Errorf("leak: %s", f.Message)
				}
				if f.Kind != "oom" && (machineSite.MatchString(f.Site.Function) || machineFile.MatchString(f.Site.File)) {
					t.Errorf("site named by the machinery: %+v", f.Site)
				}
			}
			if r.FindingsTotal > 40 {
				t.Errorf("%d findings", r.FindingsTotal)
			}
			for _, d := range in.Devices {
				w, ok := want[strconv.Itoa(d.Device)]
				if !ok {
					t.Errorf("device %d is not in the snapshot", d.Device)
					continue
				}
				if d.ActiveBytes != w.ActiveBytes || d.ActiveBlocks != w.ActiveBlocks || d.PendingFreeBytes != w.PendingBytes ||
					d.PendingFreeBlocks != w.PendingBlocks || d.Segments != w.Segments || d.ReservedBytes != w.ReservedBytes || d.TraceEntries != w.TraceEntries {
					t.Errorf("device %d: %+v, the snapshot says %+v", d.Device, d, w)
				}
				if d.PeakActiveBytes != w.PeakBytes || (w.PeakBytes > 0 && d.PeakSeq != w.PeakSeq) {
					t.Errorf("device %d: peak %d bytes at trace entry %d, the trace's is %d at %d", d.Device, d.PeakActiveBytes, d.PeakSeq, w.PeakBytes, w.PeakSeq)
				}
				if held[d.Device] != w.ActiveBytes+w.PendingBytes {
					t.Errorf("device %d: findings hold %d bytes, the snapshot %d active + %d pending free", d.Device, held[d.Device], w.ActiveBytes, w.PendingBytes)
				}
				var why string
				switch {
				case w.TraceEntries > 0 && w.Allocs == 0:
					why = "records no allocations"
				case w.Allocs > 0 && d.Iterations < 4:
					why = "growth across iterations cannot be judged"
				}
				if why != "" && !warned(in.Warnings, why) {
					t.Errorf("device %d: no warning %q in %q", d.Device, why, in.Warnings)
				}
			}
		})
	}
}

func warned(ws []string, s string) bool {
	for _, w := range ws {
		if regexp.MustCompile(regexp.QuoteMeta(s)).MatchString(w) {
			return true
		}
	}
	return false
}

// TestFieldOneForwardPass: silmont2000's memory_forward_* snapshots each
// record one forward pass of a 12-layer transformer (benchmark.py's
// run_mode calls the model once; every Python stack in the traces runs
// through transformer_lm.py's forward and its loop over the layers, and
// the stacks have no frame of module.py's call). The layers recur evenly,
// but they are one step: no iterations may be counted, and the report must
// say that growth cannot be judged.
func TestFieldOneForwardPass(t *testing.T) {
	for _, name := range []string{"silmont2000__memory_forward_fp32_128.pickle", "silmont2000__memory_forward_bf16_128.pickle"} {
		path := filepath.Join(fieldDir, name)
		if _, err := os.Stat(path); err != nil {
			t.Skipf("the public snapshots are not here (%v)", err)
		}
		code, out, errOut := run(t, nil, "analyze", "--format", "json", path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		var r struct {
			Inputs []struct {
				Devices []struct {
					Iterations int `json:"iterations"`
				} `json:"devices"`
				Warnings []string `json:"warnings"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if n := r.Inputs[0].Devices[0].Iterations; n != 0 {
			t.Errorf("%s: %d iterations counted in one forward pass", name, n)
		}
		if !warned(r.Inputs[0].Warnings, "growth across iterations cannot be judged") {
			t.Errorf("%s: no warning that growth cannot be judged: %q", name, r.Inputs[0].Warnings)
		}
		// Every allocation of the trace is freed by its end (a reviewer
		// counted 681 allocations, 681 freed): nothing is reported as
		// retained, and the warning must not say it is.
		if !warned(r.Inputs[0].Warnings, "none of the memory the trace saw allocated is held at its end") {
			t.Errorf("%s: the warning does not say the trace's allocations were all freed: %q", name, r.Inputs[0].Warnings)
		}
	}
}
