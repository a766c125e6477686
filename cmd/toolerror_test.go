package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuleak/gpuleak/report"
)

// A file that holds a tool's error in place of its output (testdata
// README, toolerror/) is an error naming the file, the line, the tool, what
// the line means and what to run instead: exit 2 for analyze and oom, an
// unreadable input (not a skipped file) for report. Before, analyze called
// each an unrecognised input format and oom read the traceback as a log
// without an OOM (exit 0).
func TestToolErrorInPlaceOfOutput(t *testing.T) {
	dir := td + "toolerror/"
	// The compute-sanitizer log with its banner is the tool's output, and
	// says that it failed: the tool's failure, with what the line means.
	cases := []struct {
		file, want, means string
	}{
		{"sanitizer_xml_nosave.txt", ":1: compute-sanitizer's error, not its output", "--xml --save report.xml"},
		{"sanitizer_target_terminated.txt", ": line 2: the tool failed", "the program ended before its first CUDA call"},
		{"nvidia_smi_no_driver.csv", ":1: nvidia-smi's error, not its output", "could not reach the NVIDIA driver"},
		{"nvidia_smi_no_devices.csv", ":1: nvidia-smi's error, not its output", "nvidia-smi saw no GPU"},
		{"nvidia_smi_nvml_mismatch.csv", ":1: nvidia-smi's error, not its output", "NVML could not start"},
		{"torch_no_cuda.log", ":6: PyTorch's error, not its output", "has no CUDA"},
	}
	for _, c := range cases {
		for _, cmd := range []string{"analyze", "oom"} {
			code, _, errOut := run(t, nil, cmd, dir+c.file)
			if code != ExitInput {
				t.Errorf("%s %s: exit %d, want %d; stderr %q", cmd, c.file, code, ExitInput, errOut)
			}
			if want := dir + c.file + c.want; !strings.Contains(errOut, want) || !strings.Contains(errOut, c.means) {
				t.Errorf("%s %s: stderr %q; want %q and %q", cmd, c.file, errOut, want, c.means)
			}
			if strings.Contains(errOut, "unrecognised") {
				t.Errorf("%s %s: stderr %q calls it unrecognised", cmd, c.file, errOut)
			}
		}
	}
	// gpuleak report lists them as inputs it could not read, with why.
	root := t.TempDir()
	for _, c := range cases {
		abs, err := filepath.Abs(dir + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(root, c.file)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := run(t, nil, "report", "-o", "-", "--format", "json", root)
	var d report.Daily
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("exit %d, %v; stderr %q", code, err, errOut)
	}
	if d.Summary.Unreadable != len(cases) || d.Summary.Skipped != 0 {
		t.Errorf("report: %d unreadable, %d skipped; want %d and 0", d.Summary.Unreadable, d.Summary.Skipped, len(cases))
	}
	for _, u := range d.Unreadable {
		if !strings.Contains(u.Error, "'s error, not its output") && !strings.Contains(u.Error, "the tool failed") {
			t.Errorf("report: %s: %q", u.Path, u.Error)
		}
	}
}

// The same line after the tool's banner: with the tool's prefix it is
// the tool's failure (it was an error record of kind "other", and the log
// a clean run, exit 0); without, the log holds no record, and the line
// says why.
func TestToolErrorAfterBanner(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"========= COMPUTE-SANITIZER\n========= --xml was enabled but no save location was specified\n", ": line 2: the tool failed"},
		{"========= COMPUTE-SANITIZER\n--xml was enabled but no save location was specified\n", ":2: compute-sanitizer's error, not its output"},
	} {
		p := filepath.Join(t.TempDir(), "sanitizer.log")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := run(t, nil, "analyze", p)
		if code != ExitInput || !strings.Contains(errOut, p+c.want) || !strings.Contains(errOut, "--xml --save report.xml") {
			t.Errorf("%q: exit %d, stderr %q", c.text, code, errOut)
		}
	}
}

// A longer text that no format claims and holds such a line is still
// unrecognised (it is more than the tool's error), and the error names the
// line and what it means.
func TestToolErrorLineInLongText(t *testing.T) {
	var b strings.Builder
	for i := range 20 {
		b.WriteString("epoch " + string(rune('a'+i)) + " done\n")
	}
	b.WriteString("No devices were found\n")
	p := filepath.Join(t.TempDir(), "job.log")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, nil, "analyze", p)
	if code != ExitInput || !strings.Contains(errOut, "unrecognised input format") || !strings.Contains(errOut, `line 21 is nvidia-smi's error "No devices were found"`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
