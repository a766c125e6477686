package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// One process's memory_summary() printed twice (the session-43 tester's
// s2_twice.log: the OOM message, its summary at line 3, "exiting", the
// same summary at line 51) headed the report with device 0 twice. The
// counters are cumulative, so the latest print is the device's state: it
// is shown once, saying it is the latest of 2. Two launcher ranks that each
// printed a summary of their "device 0" (s3_ranks.log: "[rank0]: " and
// "[rank1]: " lines) are two processes: each is shown, named by its rank
// tag, and JSON gives each set's process. Their allocator-counted OOMs
// (the same file without the two OOM messages: each table counts 1) are
// two, one per process; the maximum per device counted 1.
func TestHunt44SummaryPrintedTwiceOnceInHeader(t *testing.T) {
	syn := td + "pytorch/synthetic/"
	_, out, _ := run(t, nil, "oom", syn+"s43_summary_printed_twice.log")
	head, _, _ := strings.Cut(out, "\n")
	if strings.Count(head, "device 0") != 1 || !strings.Contains(head, "device 0, the latest of 2 prints: 452 MiB allocated") {
		t.Errorf("printed twice: header %.300q; want device 0 once, the latest of 2 prints", head)
	}

	_, out, _ = run(t, nil, "oom", syn+"s43_summary_ranks_device0.log")
	head, _, _ = strings.Cut(out, "\n")
	if !strings.Contains(head, "device 0 ([rank0]:):") || !strings.Contains(head, "device 0 ([rank1]:):") || strings.Contains(head, "latest") {
		t.Errorf("two ranks: header %.300q; want device 0 of [rank0]: and of [rank1]:", head)
	}
	_, out, _ = run(t, nil, "oom", "--format", "json", syn+"s43_summary_ranks_device0.log")
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Inputs) != 1 || len(r.Inputs[0].AllocatorStats) != 2 {
		t.Fatalf("two ranks json: %v %.200q", err, out)
	}
	if st := r.Inputs[0].AllocatorStats; st[0].Process != "[rank0]:" || st[1].Process != "[rank1]:" {
		t.Errorf("two ranks json: processes %q, %q; want [rank0]:, [rank1]:", st[0].Process, st[1].Process)
	}

	code, out, errOut := run(t, nil, "analyze", "--fail-on", "oom", syn+"s44_summary_ranks_device0_no_message.log")
	if code != 1 || !strings.Contains(out+errOut, "2 out-of-memory errors more counted by the allocator") {
		t.Errorf("two ranks without messages --fail-on oom: exit %d, %.300q; want 1, 2 counted", code, out+errOut)
	}
	code, out, errOut = run(t, nil, "analyze", "--fail-on", "oom", syn+"s43_summary_printed_twice.log")
	if code != 1 || strings.Contains(out+errOut, "counted by the allocator") {
		t.Errorf("printed twice --fail-on oom: exit %d, %.300q; want 1 for its OOM, none counted beyond it", code, out+errOut)
	}
}
