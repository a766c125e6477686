package pytorchtext

import (
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// The host's OOM killer: when a job's processes use more of the machine's
// memory (RAM) than the kernel or the job's cgroup allows, the kernel
// kills one ("Out of memory: Killed process N (python)", "Memory cgroup
// out of memory: Killed process N", "oom-kill:constraint=..."), and Slurm
// reports it for the step ("slurmstepd: error: Detected 1 oom_kill event
// in StepId=32436650.0. Some of the step tasks have been OOM Killed.",
// then "srun: error: gpu006: task 0: Out Of Memory"). That is host memory,
// not a GPU's: no GPU OOM, but a warning (once per input) saying what
// ended the task.

// hostKillRe reads the lines of a host OOM kill: Slurm's step record and
// srun's task status, the kernel's kill record.
var hostKillRe = lazyre.New(`slurmstepd: error: Detected \d+ oom[_-]kill events? in |srun: error: \S+: tasks? [\d,\-\[\]]+: Out Of Memory|(?:Memory cgroup out of memory|Out of memory): Killed process \d+|\boom-kill:constraint=`)

// seeHostKill warns of the first line of a host OOM kill (hostKillRe).
func (r *Reader) seeHostKill(line string) {
	if r.hostKill || !strings.Contains(line, "ill") && !strings.Contains(line, "Out Of Memory") {
		return
	}
	loc := hostKillRe.Re().FindStringIndex(line)
	if loc == nil {
		return
	}
	r.hostKill = true
	note := "the host's OOM killer ended a task (" + clip(strings.TrimSpace(line[loc[0]:])) + "): the machine's memory (RAM), or the job's cgroup share of it (Slurm's --mem), ran out, and the kernel killed a process: host memory, not a GPU's; no GPU OOM is counted for it (the job's memory request, or fewer or lighter worker processes such as data loaders, is what to change)"
	r.meta.Warnings.Linef(int(r.line), "%s", note)
	r.meta.NotOOMs.Linef(int(r.line), "%s", note)
}
