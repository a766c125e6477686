package nvml

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
)

// A paste may hold the outputs of several tools run on one machine, each
// after its shell prompt: gpustat's text, whose header names the host
// ("gpu-a-11.extreme  Mon Aug 22 15:23:57 2022  515.65.01"), and
// nvidia-smi's table or -q report, which name none (wookayin/gpustat#130).
// Their GPUs are series apart, the host's and a bare "gpu 0", and stay
// so: gpustat's used memory is NVML's figure that counts the driver's
// reservation, nvidia-smi's since driver R510 leaves it out, so one
// series of both would read the difference (103 MiB against 0 MiB on an
// idle P100) as a release or a rise. What the paste says of their
// identity is a warning: where the prompt an output without a host was
// run at names the host a gpustat header names ("anamaria@gpu-a-11.extreme:~
// $ nvidia-smi"), and a GPU of each agrees in index, total memory and
// name, they are one GPU shown by two tools; without such a prompt, GPUs
// alike may still be two machines' (a cluster's nodes have the same
// GPUs), and the warning says the doubt.

// promptHostRe reads the host of a shell prompt: bash's default
// "user@host:dir$ ", Red Hat's "[user@host dir]$ ", after a "(venv)".
var promptHostRe = lazyre.New(`^\s*(?:\([\w.-]+\)\s*)?\[?[\w.-]+@([A-Za-z0-9][\w.-]*)[:\s\]]`)

// promptHost returns the host a prompt line names, or "".
func promptHost(prompt []byte) string {
	m := promptHostRe.FindSubmatch(prompt)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// pasteHosts is what a Reader knows of the hosts of a paste's outputs.
type pasteHosts struct {
	// named: the hosts gpustat headers name (in the input's head, and as
	// read), with the line of the first.
	named map[string]int
	// prompt is the host the prompt of the output being read names, from
	// line promptLine ("" for none).
	prompt     string
	promptLine int
	// gpustat and bare are the GPUs seen in gpustat's output (with a
	// host) and in outputs without a host; said: the warning was given
	// (once an input).
	gpustat, bare []seenGPU
	said          bool
}

// seenGPU is a GPU's sample in one output: its host ("" for none), the
// host its output's prompt names (prompt, from line promptLine), index,
// used and total memory (bytes), name, convention and line.
type seenGPU struct {
	host, prompt string
	promptLine   int
	gpu          int32
	used, total  int64
	hasUsed      bool
	name         string
	conv         Convention
	line         int
}

// nameHost notes that a gpustat header at line n names host.
func (p *pasteHosts) nameHost(host []byte, n int) {
	if p.named == nil {
		p.named = map[string]int{}
	}
	if _, ok := p.named[string(host)]; !ok {
		p.named[string(host)] = n
	}
}

// scanHosts notes the hosts the gpustat headers of head (the input's
// first bytes, from line 1) name, so that an output pasted before
// gpustat's is compared too.
func (p *pasteHosts) scanHosts(head []byte) {
	for n := 1; len(head) > 0; n++ {
		line, rest, _ := bytes.Cut(head, []byte("\n"))
		head = rest
		if len(line) > 200 || !bytes.Contains(line, []byte(":")) {
			continue
		}
		if m := gpustatHeadRe.FindSubmatch(trimSpace(line)); m != nil {
			p.nameHost(m[1], n)
		}
	}
}

// atPrompt starts the output after the prompt at line n.
func (p *pasteHosts) atPrompt(prompt []byte, n int) {
	p.prompt, p.promptLine = promptHost(prompt), n
}

// maxSeenGPUs bounds the GPUs pasteHosts keeps of each kind.
const maxSeenGPUs = 64

// sameGPUNote compares s, a GPU's sample of convention conv just
// emitted, with the GPUs of the paste's other kind of output (gpustat's
// with a host, or one without), and says, once, what the paste tells of a
// pair alike in index, total memory and name (see above).
func (r *Reader) sameGPUNote(s *sample, conv Convention) {
	p := &r.hosts
	if p.said || s.hasPID || !s.hasGPU || !s.hasTotal {
		return
	}
	mine, theirs := &p.bare, p.gpustat
	if len(s.host) > 0 {
		mine, theirs = &p.gpustat, p.bare
	}
	if len(theirs) == 0 && len(*mine) >= maxSeenGPUs {
		// Nothing to compare it with, and no room to keep it: a long
		// gpustat log's samples cost no copy each.
		return
	}
	g := seenGPU{host: string(s.host), prompt: p.prompt, promptLine: p.promptLine, gpu: s.gpu,
		used: s.used, total: s.total, hasUsed: s.hasUsed, name: string(s.gpuName), conv: conv, line: max(r.line, 1)}
	for _, o := range theirs {
		if o.gpu != g.gpu || o.total != g.total || !sameGPUName(o.name, g.name) {
			continue
		}
		host, bare := o, g
		if host.host == "" {
			host, bare = g, o
		}
		if bare.prompt != "" && bare.prompt != host.host {
			continue // its prompt names another host: another machine's GPU
		}
		p.said = true
		if bare.prompt == "" {
			r.meta.Warnings.Linef(bare.line, "GPU %d at line %d (its output names no host) matches GPU %d of host %s at line %d by index, total memory (%d MiB) and name, but no shell prompt names the host the output without one ran on: whether they are one GPU is not known, and they are read as two series", bare.gpu, bare.line, host.gpu, host.host, host.line, g.total/MiB)
			return
		}
		why := ""
		if bare.conv == ExcludesReserved && bare.hasUsed && host.hasUsed {
			why = fmt.Sprintf(": gpustat's used memory (%s) counts the driver's reservation and nvidia-smi's (%s; driver R510 and later) leaves it out, so in one series the difference would read as a change in use", mibText(host.used), mibText(bare.used))
		}
		r.meta.Warnings.Linef(bare.line, "GPU %d at line %d and GPU %d of host %s at line %d are one GPU shown by two tools: the prompt at line %d names that host for the output without one, and their index, total memory (%d MiB) and name agree; they are kept as two series, one a tool%s", bare.gpu, bare.line, host.gpu, host.host, host.line, bare.promptLine, g.total/MiB, why)
		return
	}
	if len(*mine) < maxSeenGPUs {
		*mine = append(*mine, g)
	}
}

// mibText writes n bytes as whole MiB ("103 MiB").
func mibText(n int64) string { return fmt.Sprintf("%d MiB", n/MiB) }

// sameGPUName reports whether two outputs' names of a GPU can be one
// name: equal, or one cut by nvidia-smi ("Tesla P100-PCIE...") a prefix
// of the other; an empty name says nothing against.
func sameGPUName(a, b string) bool {
	if a == "" || b == "" || a == b {
		return true
	}
	cut := func(s string) (string, bool) {
		if t, ok := strings.CutSuffix(s, "..."); ok {
			return t, true
		}
		return strings.CutSuffix(s, "…")
	}
	if t, ok := cut(a); ok && strings.HasPrefix(b, t) {
		return true
	}
	t, ok := cut(b)
	return ok && strings.HasPrefix(a, t)
}
