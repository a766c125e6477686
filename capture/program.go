package capture

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// Program is a program a capture runs and follows: it and its descendants
// (Tree) are the processes recorded.
type Program struct {
	Name string // the program's name as given
	Tree *ProcessTree
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProgram starts argv[0] with the arguments argv[1:] and the given
// standard streams.
func StartProgram(argv []string, stdin io.Reader, stdout, stderr io.Writer) (*Program, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run %s: %w", argv[0], err)
	}
	p := &Program{Name: argv[0], Tree: NewProcessTree(int64(cmd.Process.Pid)), cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Done is closed when the program has exited.
func (p *Program) Done() <-chan struct{} { return p.done }

// Signal passes sig on to the program.
func (p *Program) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Wait waits for the program to exit and returns its exit code (0 on
// success; 128 + N when signal N ended it, as shells report it) and the
// signal's name, if one ended it. An error means waiting itself failed.
func (p *Program) Wait() (code int, signal string, err error) {
	<-p.done
	if p.err == nil {
		return 0, "", nil
	}
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) {
		return 0, "", fmt.Errorf("waiting for %s: %w", p.Name, p.err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal().String(), nil
	}
	return ee.ExitCode(), "", nil
}

// FollowFilter is a RunOptions.Keep that keeps the processes of tree.
// NVML lists pids of the host's pid namespace; in a container they may not
// exist in this one, and such processes cannot be placed in the tree: they
// are kept, and note is called once with a sentence saying so. Decisions
// are remembered (a pid outside the tree cannot enter it), so /proc is read
// again only for a pid not seen before.
func FollowFilter(tree *ProcessTree, note func(string)) func(int64) bool {
	warned := false
	decided := map[int64]bool{}
	return func(pid int64) bool {
		if keep, ok := decided[pid]; ok {
			return keep
		}
		if len(decided) >= 1<<14 {
			clear(decided) // pids are reused: forget now and then
		}
		keep := true
		switch {
		case tree.Contains(pid):
		case Exists(pid):
			keep = false
		default:
			if !warned {
				warned = true
				note(fmt.Sprintf("NVML lists pid %d, which is not in this pid namespace (a container?): processes that cannot be placed in the process tree of pid %d are recorded too", pid, tree.Root()))
			}
		}
		decided[pid] = keep
		return keep
	}
}
