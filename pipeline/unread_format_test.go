package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/parse/nvml"
	"github.com/gpuleak/gpuleak/parse/pytorch"
)

// TestUnreadInputNamesItsFormat: an input whose content was recognised
// but could not be read (a snapshot cut inside its pickle, an nvidia-smi
// log cut inside its first row) is listed with the format it was recognised as,
// for every use; one whose content is not recognised, or that cannot be
// opened, has none. The s37 tester found "format": "" for both cut files.
func TestUnreadInputNamesItsFormat(t *testing.T) {
	dir := t.TempDir()
	cut := func(name, src string, n int) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// 100,000 of the snapshot's 1,137,949 bytes: its pickle header is
	// whole (recognised), its body ends inside an opcode (not read).
	snap := cut("cut.pickle", "../testdata/pytorch/leak_train_loop.pickle", 100000)
	// 250 bytes of the --query-gpu log: its header (168 bytes) and a row
	// stopping mid-field: no row can be read (a log with rows beside a
	// cut one is read in part: parse/nvml's TestSkippedRows).
	smi := cut("cut_smi.csv", "../testdata/nvml/query_gpu.csv", 250)
	unknown := filepath.Join(dir, "hello.txt")
	if err := os.WriteFile(unknown, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pickle")

	cases := []struct {
		use  Use
		good string
		path string
		want parse.Format
	}{
		{Analyze, "../testdata/pytorch/oom_error.txt", snap, pytorch.FormatSnapshot},
		{Analyze, "../testdata/pytorch/oom_error.txt", smi, nvml.FormatQueryGPU},
		{Analyze, "../testdata/pytorch/oom_error.txt", unknown, parse.FormatUnknown},
		{Analyze, "../testdata/pytorch/oom_error.txt", missing, parse.FormatUnknown},
		{Postmortem, "../testdata/pytorch/oom_error.txt", snap, pytorch.FormatSnapshot},
		{Postmortem, "../testdata/pytorch/oom_error.txt", smi, nvml.FormatQueryGPU},
		{Postmortem, "../testdata/pytorch/oom_error.txt", missing, parse.FormatUnknown},
		// trend refuses a snapshot it recognised: still a snapshot.
		{Trend, "../testdata/nvml/query_apps.csv", snap, pytorch.FormatSnapshot},
		{Trend, "../testdata/nvml/query_apps.csv", smi, nvml.FormatQueryGPU},
		{Trend, "../testdata/nvml/query_apps.csv", unknown, parse.FormatUnknown},
		{Trend, "../testdata/nvml/query_apps.csv", missing, parse.FormatUnknown},
	}
	for _, c := range cases {
		res, err := Run(context.Background(), testOptions(t, c.use), []string{c.path, c.good})
		if err != nil || res.Unread == nil || len(res.Report.Inputs) != 2 {
			t.Fatalf("use %d, %s: err %v, result %+v: want the input listed as unread", c.use, filepath.Base(c.path), err, res)
		}
		in := res.Report.Inputs[0]
		if in.Error == "" || in.Format != string(c.want) {
			t.Errorf("use %d, %s: format %q, error %q: want format %q and the error", c.use, filepath.Base(c.path), in.Format, in.Error, c.want)
		}
	}
}
