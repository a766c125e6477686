package capture

import (
	"bytes"
	"os"
	"strconv"
)

// procRoot is where the process table is read (a variable for tests).
var procRoot = "/proc"

// procComm returns /proc/PID/comm, or "" when the process is gone or
// /proc is not there.
func procComm(pid int64) string {
	b, err := os.ReadFile(procRoot + "/" + strconv.FormatInt(pid, 10) + "/comm")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// maxProcs bounds the process table read from /proc.
const maxProcs = 1 << 20

// ProcessTree is the set of a root process and its descendants, read from
// /proc (Linux). Pids are those of the reader's pid namespace.
type ProcessTree struct {
	root    int64
	members map[int64]bool
	ppid    map[int64]int64
}

// NewProcessTree follows root and its descendants.
func NewProcessTree(root int64) *ProcessTree {
	return &ProcessTree{root: root, members: map[int64]bool{root: true}, ppid: map[int64]int64{}}
}

// Root is the followed process.
func (t *ProcessTree) Root() int64 { return t.root }

// Contains says whether pid is the root or one of its descendants, reading
// /proc again when pid is not known yet. A descendant that has exited stays
// a member (its memory may still be listed for a moment).
func (t *ProcessTree) Contains(pid int64) bool {
	if t.members[pid] {
		return true
	}
	t.refresh()
	return t.members[pid]
}

// Exists says whether pid is in this pid namespace's /proc.
func Exists(pid int64) bool {
	_, err := os.Stat(procRoot + "/" + strconv.FormatInt(pid, 10))
	return err == nil
}

// refresh re-reads every process's parent and adds the descendants of the
// members.
func (t *ProcessTree) refresh() {
	d, err := os.Open(procRoot)
	if err != nil {
		return
	}
	defer d.Close()
	names, err := d.Readdirnames(maxProcs)
	if err != nil && len(names) == 0 {
		return
	}
	clear(t.ppid)
	for _, n := range names {
		pid, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			continue
		}
		if pp, ok := readPPID(pid); ok {
			t.ppid[pid] = pp
		}
	}
	// Add children of members until nothing changes (a tree: at most its depth rounds).
	for changed := true; changed; {
		changed = false
		for pid, pp := range t.ppid {
			if !t.members[pid] && t.members[pp] {
				t.members[pid] = true
				changed = true
			}
		}
	}
}

// readPPID reads the parent pid from /proc/PID/stat: the fourth field,
// counted after the command name's closing parenthesis (a name may hold
// spaces and parentheses).
func readPPID(pid int64) (int64, bool) {
	b, err := os.ReadFile(procRoot + "/" + strconv.FormatInt(pid, 10) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.ParseInt(string(f[1]), 10, 64)
	return pp, err == nil
}
