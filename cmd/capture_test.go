package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gpuleak/gpuleak/capture"
)

const testMiB = 1 << 20

// fakeSource stands for NVML: one H200 where the test process itself
// (outside any followed tree) leaks 64 MiB per sample from 512 MiB, beside
// pid 1 (also outside) and pid 2147483000 (in no pid namespace of this
// machine). Its samples are 0.5 s apart on its own clock, whatever the
// interval, so the leak is exactly 128 MiB/s however loaded the machine is.
type fakeSource struct {
	n int64
}

func fakeOpen(capture.Config) (capture.Source, error) { return &fakeSource{}, nil }

func (f *fakeSource) Sample(dst []capture.GPUSample) ([]capture.GPUSample, error) {
	const total, reserved = 150754820096, 644939776
	proc := int64(512*testMiB) + f.n*64*testMiB
	g := capture.GPUSample{TimeUs: 1796091672_000000 + f.n*500_000, Host: "node1", Index: 0, UUID: "GPU-0", Name: "NVIDIA H200",
		MemoryInfo: 2, TotalBytes: total, ReservedBytes: reserved, UsedBytes: proc + 600*testMiB,
		FreeBytes: total - reserved - proc - 600*testMiB,
		Processes: []capture.Process{
			{PID: 1, Name: "init", UsedBytes: 100 * testMiB, HasUsed: true, Type: "compute"},
			{PID: int64(os.Getpid()), Name: "python3", UsedBytes: proc, HasUsed: true, Type: "compute"},
			{PID: 2147483000, Name: "", UsedBytes: 500 * testMiB, HasUsed: true, Type: "compute"},
		}}
	f.n++
	return append(dst, g), nil
}

func (f *fakeSource) Close() error { return nil }

// runCaptureWith runs "gpuleak capture args" with src standing for NVML.
func runCaptureWith(t *testing.T, open func(capture.Config) (capture.Source, error), args ...string) (code int, stdout, stderr string) {
	t.Helper()
	// The program writes to these too, from os/exec's copying goroutines.
	var out, errOut lockedBuffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	c := NewCmdCapture(ios, "test", func(o *CaptureOptions) error {
		o.Open = open
		o.Notify = func(chan<- os.Signal) func() { return func() {} }
		return runCapture(o)
	})
	c.SetArgs(args)
	c.SilenceErrors, c.SilenceUsage = true, true
	c.SetOut(&out)
	c.SetErr(&errOut)
	err := c.Execute()
	if err != nil && !errors.Is(err, ErrFindings) {
		fmt.Fprintf(&errOut, "gpuleak: %v\n", err)
	}
	return ExitCode(err), out.String(), errOut.String()
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type capLine struct {
	TS        string `json:"ts"`
	GPU       int    `json:"gpu"`
	Processes []struct {
		PID  int64  `json:"pid"`
		Name string `json:"name"`
		Used *int64 `json:"used"`
	} `json:"processes"`
}

func readCapture(t *testing.T, b []byte) []capLine {
	t.Helper()
	var lines []capLine
	for i, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var c capLine
		if err := json.Unmarshal(l, &c); err != nil {
			t.Fatalf("line %d %q: %v", i+1, l, err)
		}
		lines = append(lines, c)
	}
	return lines
}

// The program's exit code comes back; its processes are followed: pid 1
// is not in its tree and is left out, a pid in no namespace of this
// machine is kept and said so; every line of the file is a whole record.
func TestCaptureCommandExitCode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	code, _, stderr := runCaptureWith(t, fakeOpen, "-o", path, "--interval", "20ms", "--", "sh", "-c", "sleep 0.6; exit 3")
	if code != 3 {
		t.Fatalf("exit code %d, want the program's 3; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "sh exited with code 3") || !strings.Contains(stderr, "not in this pid namespace") {
		t.Errorf("stderr lacks the exit or the namespace note:\n%s", stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := readCapture(t, b)
	// 0.6 s at 20 ms: about 30 ticks; at least 3 even on a loaded machine
	// (0.2 s gave 2 at a load average of 25 on 2 cores).
	if len(lines) < 3 {
		t.Fatalf("%d ticks, want several", len(lines))
	}
	for _, l := range lines {
		var pids []int64
		for _, p := range l.Processes {
			pids = append(pids, p.PID)
		}
		if len(pids) != 1 || pids[0] != 2147483000 {
			t.Fatalf("processes %v: want only the unplaceable pid (1 and the test process are outside the tree)", pids)
		}
	}
	if m := regexp.MustCompile(`gpuleak: (\d+) samples \((\d+) rows\)`).FindStringSubmatch(stderr); m == nil || m[1] != strconv.Itoa(len(lines)) {
		t.Errorf("summary %q does not count the %d ticks written", m, len(lines))
	}
}

// Without a program, --duration stops sampling; the process rows are all
// kept; --analyze prints the trend: the leaking pid growing at 128 MiB/s.
func TestCaptureDurationAnalyze(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.jsonl")
	code, stdout, stderr := runCaptureWith(t, fakeOpen, "-o", path, "--interval", "20ms", "--duration", "1s", "--analyze")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	pid := os.Getpid()
	if !regexp.MustCompile(fmt.Sprintf(`(?m)\b%d\b.*python3.*growing`, pid)).MatchString(stdout) {
		t.Fatalf("no growing row for pid %d in\n%s", pid, stdout)
	}
	b, _ := os.ReadFile(path)
	lines := readCapture(t, b)
	if n := len(lines[0].Processes); n != 3 {
		t.Errorf("%d processes in a tick, want all 3 (no --pid, no program)", n)
	}
	// The slope, through the same reader and analysis as gpuleak trend.
	code, out, _ := runIO(t, "", false, "trend", "--format", "json", path)
	if code != 0 {
		t.Fatal(out)
	}
	var rep trendReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.PID != nil && *f.PID == int64(pid) {
			if got := *f.Slope / testMiB; math.Abs(got-128) > 12.8 {
				t.Errorf("slope %.1f MiB/s, want 128 +- 10%%", got)
			}
			return
		}
	}
	t.Errorf("no finding for pid %d in %s", pid, out)
}

func TestCaptureUsageAndNoNVML(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--interval", "1ms"}, "at least 10ms"},
		{[]string{"--rotate", "soon"}, "bad --rotate"},
		{[]string{"--pid", "5", "--", "true"}, "not together"},
		{[]string{"-o", "-", "--analyze"}, "--analyze needs a file"},
		{[]string{"file.jsonl"}, "capture takes no FILE"},
	} {
		code, _, stderr := runCaptureWith(t, fakeOpen, tc.args...)
		if code != ExitInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	// The default build: no NVML. One line, exit 2, no panic, and the
	// program is not started.
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	code, _, stderr := runIO(t, "", false, "capture", "-o", filepath.Join(dir, "x.jsonl"), "--", "touch", marker)
	if capture.BuiltIn {
		t.Skip("built with NVML")
	}
	if code != ExitInput || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "make build-nvml") {
		t.Errorf("exit %d, stderr %q; want 2 and one line saying how to build NVML in", code, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran although nothing could be sampled")
	}
	code, _, stderr = runIO(t, "", false, "watch")
	if code != ExitInput || !strings.Contains(stderr, "make build-nvml") {
		t.Errorf("watch: exit %d, stderr %q", code, stderr)
	}
}

// --- Signals, in a child process: the test binary re-run as gpuleak. ---

const (
	captureChildEnv = "GPULEAK_CAPTURE_CHILD"
	watchChildEnv   = "GPULEAK_WATCH_CHILD" // for trying the terminal view by hand (tmux)
)

// TestMain lets the test binary act as "gpuleak capture" with the fake
// source, so that a real signal can be sent to it.
func TestMain(m *testing.M) {
	if args := os.Getenv(captureChildEnv); args != "" {
		ios := System()
		c := NewCmdCapture(ios, "test", func(o *CaptureOptions) error {
			o.Open = fakeOpen
			return runCapture(o)
		})
		c.SetArgs(strings.Fields(args))
		err := c.Execute()
		if err != nil {
			fmt.Fprintf(os.Stderr, "gpuleak: %v\n", err)
		}
		os.Exit(ExitCode(err))
	}
	if args := os.Getenv(watchChildEnv); args != "" {
		c := NewCmdWatch(System(), "test", func(o *WatchOptions) error {
			o.Open = fakeOpen
			return runWatch(o)
		})
		c.SetArgs(strings.Fields(args))
		err := c.Execute()
		os.Exit(ExitCode(err))
	}
	os.Exit(m.Run())
}

// signalCapture starts capture writing samples to standard output, sends
// SIGINT once it has written 5 lines, and returns its exit code, the lines
// it wrote and its standard error.
func signalCapture(t *testing.T, args string) (int, []string, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), captureChildEnv+"="+args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) == 5 {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, lines, stderr.String()
}

// checkNoLoss: every line is a whole record, and the summary counts as
// many samples as were written: no tick taken was lost.
func checkNoLoss(t *testing.T, lines []string, stderr string) {
	t.Helper()
	if len(lines) < 5 {
		t.Fatalf("%d lines before the end, want at least the 5 seen before the signal; stderr:\n%s", len(lines), stderr)
	}
	readCapture(t, []byte(strings.Join(lines, "\n")+"\n"))
	m := regexp.MustCompile(`gpuleak: (\d+) samples`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary in stderr:\n%s", stderr)
	}
	if n, _ := strconv.Atoi(m[1]); n != len(lines) {
		t.Errorf("%d samples taken, %d written: a sample was lost", n, len(lines))
	}
}

// Ctrl-C (SIGINT) stops a capture without a program: exit 0, no sample lost.
func TestCaptureSIGINT(t *testing.T) {
	code, lines, stderr := signalCapture(t, "-o - --interval 20ms")
	if code != 0 {
		t.Errorf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	checkNoLoss(t, lines, stderr)
}

// With a program, SIGINT is passed on (standard input is not a terminal);
// the program's end by SIGINT comes back as 130, and no sample is lost.
func TestCaptureSIGINTPassedOn(t *testing.T) {
	code, lines, stderr := signalCapture(t, "-o - --interval 20ms -- sleep 30")
	if code != 128+int(syscall.SIGINT) {
		t.Errorf("exit %d, want 130 (sleep ended by SIGINT); stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "sleep was ended by interrupt") {
		t.Errorf("stderr does not say how the program ended:\n%s", stderr)
	}
	checkNoLoss(t, lines, stderr)
}

// Captures made by gpuleak capture on an NVIDIA H200 while
// testdata/gen/capture_leak.py leaked 64 MiB every 0.5 s (testdata/README.md):
// analyze finds the leaking pid (450 at 100 ms, 501 at 1 s: the pids the
// program printed in the device run) growing at 128 MiB/s +- 10%, and the
// GPU growing too.
func TestRealH200Capture(t *testing.T) {
	for _, tc := range []struct {
		file    string
		pid     int64
		samples int
	}{
		{"capture_h200_100ms.jsonl", 450, 270},
		{"capture_h200_1s.jsonl", 501, 25},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, out, stderr := runIO(t, "", false, "analyze", "--format", "json", nvmlData+tc.file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep trendReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Inputs) != 1 || rep.Inputs[0].Format != "pynvml-jsonl" {
				t.Fatalf("inputs %+v: want one pynvml-jsonl log", rep.Inputs)
			}
			var gpu, proc bool
			for _, f := range rep.Findings {
				if f.Classification != "growing" || f.Slope == nil {
					t.Errorf("finding %q: %s, want growing", f.Message, f.Classification)
					continue
				}
				if got := *f.Slope / testMiB; math.Abs(got-128) > 12.8 {
					t.Errorf("pid %v: slope %.1f MiB/s, want 128 +- 10%%", f.PID, got)
				}
				if f.PID == nil {
					gpu = true
					continue
				}
				proc = proc || *f.PID == tc.pid && f.Process == "python3"
			}
			if !gpu || !proc {
				t.Errorf("want the GPU and pid %d (python3) growing; findings: %s", tc.pid, out)
			}
			b, err := os.ReadFile(nvmlData + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(readCapture(t, b)); n != tc.samples {
				t.Errorf("%d ticks, want the %d the capture reported", n, tc.samples)
			}
		})
	}
}

// --pid follows a running process and stops when it exits; --rotate with
// a size starts new files, all read back by --analyze.
func TestCapturePIDAndRotate(t *testing.T) {
	sleep := exec.Command("sleep", "0.5")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { sleep.Wait(); close(done) }() // reap it, so that it leaves /proc
	dir := t.TempDir()
	code, stdout, stderr := runCaptureWith(t, fakeOpen, "-o", filepath.Join(dir, "p.jsonl"), "--interval", "20ms",
		"--pid", strconv.Itoa(sleep.Process.Pid), "--rotate", "4KiB", "--analyze")
	<-done
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p-*.jsonl"))
	ticks, total := 0, 0
	for i, f := range files {
		b, _ := os.ReadFile(f)
		total += len(b)
		if i < len(files)-1 && len(b) < 4096 {
			t.Errorf("%s: %d bytes; a part ends once it holds 4 KiB", f, len(b))
		}
		for _, l := range readCapture(t, b) {
			ticks++
			if len(l.Processes) != 1 || l.Processes[0].PID != 2147483000 {
				t.Fatalf("%s: processes %+v, want only the unplaceable one (the others are outside sleep's tree)", f, l.Processes)
			}
		}
	}
	// A tick is about 330 bytes: more than 4 KiB and a line must make two parts.
	if total > 4096+400 && len(files) < 2 {
		t.Errorf("%d bytes in one file %v: not rotated at 4 KiB", total, files)
	}
	if m := regexp.MustCompile(`gpuleak: (\d+) samples`).FindStringSubmatch(stderr); m == nil || m[1] != strconv.Itoa(ticks) {
		t.Errorf("summary %q, %d ticks in the files", m, ticks)
	}
	// --analyze read every part: one input line per file.
	if n := strings.Count(stdout, "pynvml-jsonl"); n != len(files) {
		t.Errorf("--analyze read %d inputs, want the %d parts:\n%s", n, len(files), stdout)
	}
}

// failingSource fails every sample, as NVML does once a GPU is lost.
type failingSource struct{}

func (failingSource) Sample(dst []capture.GPUSample) ([]capture.GPUSample, error) {
	return dst, errors.New("GPU 0: nvmlDeviceGetMemoryInfo_v2: GPU is lost")
}
func (failingSource) Close() error { return nil }

// When sampling fails, the capture is incomplete: exit 3 whatever the
// program's code, after waiting for the program and saying how it ended.
func TestCaptureSamplingFails(t *testing.T) {
	open := func(capture.Config) (capture.Source, error) { return failingSource{}, nil }
	code, _, stderr := runCaptureWith(t, open, "-o", filepath.Join(t.TempDir(), "f.jsonl"), "--interval", "10ms",
		"--", "sh", "-c", "sleep 1; exit 4") // 1 s: ten 10 ms ticks even on a loaded machine
	if code != ExitInternal || !strings.Contains(stderr, "10 samples in a row failed") || !strings.Contains(stderr, "sh exited with code 4") {
		t.Errorf("exit %d, stderr:\n%s\nwant 3, the NVML error and the program's exit", code, stderr)
	}
}
