package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gpuleak/gpuleak/report"
)

const fieldSnapshots = "../../shared/field/snapshots"

// On other people's snapshots (../shared/field: PyTorch 2.0 to recent,
// Linux and Windows paths, with and without traces) the CI outputs hold
// what they promise: SARIF validates, a run compared with its own
// baseline is all "same" and passes new/grown gates, the pprof profile
// holds the bytes of the JSON report's findings, and a diff of two
// versions of one file adds up.
func TestCIOutputsOnFieldSnapshots(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fieldSnapshots, "*.p*"))
	if len(files) == 0 {
		t.Skip("../shared/field/snapshots is absent: field inputs not checked")
	}
	schema := sarifSchema(t)
	dir := t.TempDir()
	for _, file := range files {
		if st, err := os.Stat(file); err != nil || st.Size() > 4<<20 {
			continue // keep the test quick on a shared machine
		}
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, nil, "analyze", "--format", "json", "--top", "0", file)
			if code != ExitOK {
				t.Skipf("analyze: exit %d %q", code, errOut)
			}
			var r report.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			_, sarif, _ := run(t, nil, "analyze", "--format", "sarif", "--top", "0", file)
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(sarif))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(inst); err != nil {
				t.Errorf("SARIF does not validate: %v", err)
			}

			base := filepath.Join(dir, name+".baseline.json")
			if code, _, errOut := run(t, nil, "analyze", "-q", "--write-baseline", base, file); code != ExitOK {
				t.Fatalf("write-baseline: exit %d %q", code, errOut)
			}
			code, out, errOut = run(t, nil, "analyze", "--format", "json", "--top", "0", "--baseline", base, "--fail-on", "new,grown", file)
			var again report.Report
			if err := json.Unmarshal([]byte(out), &again); err != nil || code != ExitOK {
				t.Fatalf("against its own baseline: exit %d, %v, %q", code, err, errOut)
			}
			if len(again.Findings) != 0 || again.Baseline.LeftOut != len(r.Findings) ||
				again.Baseline.Totals["same"].Sites != again.Baseline.Totals["all"].Sites {
				t.Errorf("against its own baseline: %d findings, %+v", len(again.Findings), again.Baseline.Totals)
			}

			_, pp, _ := run(t, nil, "analyze", "--format", "pprof", "--top", "0", file)
			p, err := profile.Parse(strings.NewReader(pp))
			if err != nil {
				t.Fatal(err)
			}
			var want, got int64
			for _, f := range r.Findings {
				if f.Kind != report.KindOOM && f.Kind != report.KindTrend && f.Kind != report.KindFragmentation {
					want += f.Bytes
				}
			}
			for _, s := range p.Sample {
				got += s.Value[1]
			}
			if got != want {
				t.Errorf("pprof holds %d bytes, the report's findings %d", got, want)
			}
		})
	}
	// Two versions of one repository's snapshot.
	a, b := filepath.Join(fieldSnapshots, "ZijianDu__memory.pickle"), filepath.Join(fieldSnapshots, "ZijianDu__memory__a632ffb.pickle")
	if _, err := os.Stat(b); err != nil {
		return
	}
	d := diffJSON(t, a, b)
	var after int64
	for _, e := range d.Entries {
		after += e.AfterBytes
	}
	if after != d.Totals["all"].AfterBytes || d.Totals["all"].Sites != len(d.Entries) {
		t.Errorf("diff totals %+v do not add up over %d entries", d.Totals["all"], len(d.Entries))
	}
}
