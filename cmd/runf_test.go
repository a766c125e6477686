package cmd

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuleak/gpuleak/report"
)

// execute runs one command built with a runF seam on args, as the root
// command would (flag errors become UsageErrors there; here cobra's own
// error is enough: what matters is whether runF was reached).
func execute(c *cobra.Command, args ...string) error {
	c.SetArgs(args)
	c.SetOut(&bytes.Buffer{})
	c.SetErr(&bytes.Buffer{})
	c.SilenceUsage, c.SilenceErrors = true, true
	return c.Execute()
}

func testStreams() *IOStreams {
	return &IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
}

// TestRunFGetsValidatedOptions: flag validation runs in RunE before the
// runF seam, so that a bad flag value never reaches runF (whatever replaces
// the run function would otherwise see unchecked options), and a valid
// command line reaches it with the flags parsed.
func TestRunFGetsValidatedOptions(t *testing.T) {
	in := "../testdata/pytorch/leak_train_loop.pickle"
	bad := map[string][][]string{
		"analyze": {{"--format", "yaml", in}, {"--min-bytes", "-1", in}, {"--top", "-1", in}, {"--min-kept", "0", in},
			{"--fail-on", "", in}, {"--fail-on", "new", in}, {"--hide-frames", "(", in}, {"--tz", "Mars/Olympus", in},
			{"--gpu-memory", "lots", in}, {"--suppressions", "../testdata/no-such-file", in}, {"-", "-"}, {in, in}},
		"oom":   {{"--format", "sarif", in}, {"--keep-frames", "[", in}, {"--tz", "+99", in}, {in, in}},
		"trend": {{"--format", "junit", in}, {"--date", "30/11/2026", in}, {"--interval", "-1s", in}, {"--fail-on", "rising", in}, {"-", "-"}},
		"diff":  {{"--format", "markdown", in, in}, {"--tolerance", "lots", in, in}, {"--min-kept", "0", in, in}, {"-", "-"}},
	}
	for name, lines := range bad {
		for _, args := range lines {
			reached := false
			var c *cobra.Command
			ios := testStreams()
			switch name {
			case "analyze":
				c = NewCmdAnalyze(ios, "test", func(*AnalyzeOptions) error { reached = true; return nil })
			case "oom":
				c = NewCmdOOM(ios, "test", func(*OOMOptions) error { reached = true; return nil })
			case "trend":
				c = NewCmdTrend(ios, "test", func(*TrendOptions) error { reached = true; return nil })
			case "diff":
				c = NewCmdDiff(ios, "test", func(*DiffOptions) error { reached = true; return nil })
			}
			err := execute(c, args...)
			var ue *UsageError
			if reached || !errors.As(err, &ue) {
				t.Errorf("%s %q: runF reached %v, error %v: want a UsageError before runF", name, args, reached, err)
			}
		}
	}

	t.Run("analyze", func(t *testing.T) {
		var got *AnalyzeOptions
		c := NewCmdAnalyze(testStreams(), "test", func(o *AnalyzeOptions) error { got = o; return nil })
		if err := execute(c, "--format", "json", "--min-bytes", "4MiB", "--fail-on", "leak>64MiB", "--hide-frames", "/mylib/", "--gpu-memory", "80GiB", in); err != nil {
			t.Fatal(err)
		}
		if got == nil || got.format != report.Format("json") || got.minBytes != 4<<20 || len(got.gates) != 1 || got.filter == nil ||
			got.nvml.Trend.GPUMemoryBytes != 80<<30 || len(got.Paths) != 1 || got.Paths[0] != in {
			t.Fatalf("runF got %+v: want the parsed flags", got)
		}
	})
	t.Run("oom", func(t *testing.T) {
		var got *OOMOptions
		c := NewCmdOOM(testStreams(), "test", func(o *OOMOptions) error { got = o; return nil })
		if err := execute(c, "--format", "json", "--tz", "+02:00", in); err != nil {
			t.Fatal(err)
		}
		if got == nil || got.format != report.Format("json") || got.filter == nil || got.loc == nil {
			t.Fatalf("runF got %+v: want the parsed flags", got)
		}
		if _, off := time.Date(2026, 1, 1, 0, 0, 0, 0, got.loc).Zone(); off != 2*3600 {
			t.Fatalf("--tz +02:00 parsed to an offset of %d s", off)
		}
	})
	t.Run("trend", func(t *testing.T) {
		var got *TrendOptions
		c := NewCmdTrend(testStreams(), "test", func(o *TrendOptions) error { got = o; return nil })
		if err := execute(c, "--fail-on", "growing,step", "--gpu-memory", "16GiB", "--interval", "5s", in); err != nil {
			t.Fatal(err)
		}
		if got == nil || !got.failOn["growing"] || !got.failOn["step"] || got.failOn["flat"] || got.nvml.Trend.GPUMemoryBytes != 16<<30 || len(got.nvml.Reader) != 2 {
			t.Fatalf("runF got %+v: want the parsed flags (--tz and --interval as reader options)", got)
		}
	})
	t.Run("diff", func(t *testing.T) {
		var got *DiffOptions
		c := NewCmdDiff(testStreams(), "test", func(o *DiffOptions) error { got = o; return nil })
		if err := execute(c, "--tolerance", "10%,1MiB", "--min-bytes", "1KB", in, "-"); err != nil {
			t.Fatal(err)
		}
		if got == nil || got.tol.Percent != 10 || got.tol.Bytes != 1<<20 || got.minBytes != 1000 || got.Base != in || got.New != "-" {
			t.Fatalf("runF got %+v: want the parsed flags", got)
		}
	})
}
