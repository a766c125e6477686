package pytorchtext

import (
	"strings"
	"testing"
)

// Session 48, f48o1: Slurm's report of a host OOM kill ("slurmstepd:
// error: Detected 1 oom_kill event ...", "srun: error: gpu006: task 0:
// Out Of Memory") after nnU-Net's "background worker is 6 feet under"
// (real, t48a) is no GPU OOM but is said, once: the host's OOM killer
// ended the task (was: nothing, "no CUDA out-of-memory message in it").
func TestF48o1HostKill(t *testing.T) {
	rs := readFile(t, "pastes/f48o1_nnunet_slurm_host_oom_kill_gpu_node.txt", false)
	if len(rs.msgs) != 0 {
		t.Fatalf("%d OOM rows, want none", len(rs.msgs))
	}
	notes := rs.meta.NotOOMs.Strings()
	if len(notes) != 1 || !strings.Contains(notes[0], "line 6: the host's OOM killer ended a task (slurmstepd: error: Detected 1 oom_kill event") {
		t.Errorf("not-OOM notes %q, want one for line 6's host OOM kill", notes)
	}
	for _, text := range []string{
		"[12345.678901] Out of memory: Killed process 4242 (python) total-vm:123456kB\n",
		"kernel: Memory cgroup out of memory: Killed process 77 (pt_main_thread)\n",
	} {
		ks, err := readText(t, "k.log", text, false)
		if err != nil {
			t.Fatal(err)
		}
		if n := ks.meta.NotOOMs.Strings(); len(n) != 1 {
			t.Errorf("%q: not-OOM notes %q, want one", text, n)
		}
	}
}

// gpuleak analyze refused such a log ("unrecognised input format", exit
// 2): the host's OOM killer's record and Ray's memory monitor's are
// sniffed as an OOM log, which the reader then warns of.
func TestF48o1SniffHostKill(t *testing.T) {
	for _, text := range []string{
		"RuntimeError: Some background worker is 6 feet under. Yuck.\nslurmstepd: error: Detected 1 oom_kill event in StepId=32436650.0. Some of the step tasks have been OOM Killed.\nsrun: error: gpu006: task 0: Out Of Memory\n",
		"ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n",
	} {
		if !SniffOOM([]byte(text)) {
			t.Errorf("%q: not sniffed", text)
		}
	}
	if SniffOOM([]byte("the OOM killer is a Linux feature\n")) {
		t.Error("prose sniffed")
	}
}
