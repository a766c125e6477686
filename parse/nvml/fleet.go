package nvml

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/internal/lazyre"
	"github.com/gpuleak/gpuleak/parse"
)

// A fleet's nvidia-smi CSV is collected from many hosts at once by a
// parallel shell, which says whose each line is:
//
//   - pdsh, clush (and clush -L, dshbak and clubak input) put the host
//     before every line: "node01: 2024/05/01 10:00:00.123, 0, ...". The
//     lines of several hosts interleave in any order. pdsh reports a host
//     it could not run the command on in a line of its own,
//     "pdsh@login: node03: ssh exited with exit code 255" (clush:
//     "clush: node03: exited with exit code 255"); clush -b -L puts a
//     node set before lines several hosts printed alike ("node[01-02]: ").
//   - clush -b, pdsh | dshbak -c and clubak -b gather each host's (or node
//     set's) output under a header: a line of dashes, the node set ("node[01-02]
//     (2)", the count when more than one), a line of dashes.
//   - parallel-ssh -i prints "[1] 10:00:00 [SUCCESS] node01" (or
//     "[FAILURE] node03 Exited with error code 255"; the host as
//     "user@node01:2222" where user or port differ) before each host's
//     output, its standard error after "Stderr: "; -P puts "node01: "
//     before each line, as pdsh does.
//   - ansible -a prints "node01 | CHANGED | rc=0 >>" before each host's
//     output ("node03 | UNREACHABLE! => {" and a JSON report for a host it
//     could not reach; "| FAILED | rc=N >>" for a command that failed).
//   - ansible -o (its oneline callback) prints each host's result on one
//     line: "node01 | CHANGED | rc=0 | (stdout) LINE\nLINE\n..." with the
//     output's newlines written as the two characters \n (and \r), then
//     " (stderr) TEXT" when the command wrote to standard error;
//     "node03 | UNREACHABLE!: MESSAGE" for a host it could not reach, and
//     "node04 | FAILED! => {...}" for a module's failure.
//
// A host's standard error is not its samples: parallel-ssh -i prints it
// after "Stderr: " to the next host's header, over as many lines as it
// has (ssh's warnings, the shell's); ansible -o after "(stderr)". It is
// skipped, counted in Metadata.Skipped, and named in a warning.
//
// fleetDecoder reads such a log: each host's lines are read by a CSV
// decoder of its own (its header, its columns, its ticks), whose rows
// carry the host in the host column, so that GPU 0 of node01 and GPU 0 of
// node02 are two series (analyze/trend keeps one per host, index, UUID).

// fleetMode is how a fleet log says whose a line is.
type fleetMode int

const (
	fleetNone   fleetMode = iota
	fleetPrefix           // "host: line" (pdsh, clush, clush -b -L)
	fleetBlocks           // a header before each host's output (clush -b, dshbak -c, pssh -i, ansible)
)

var (
	// pdshMessageRe matches pdsh's and clush's own lines about a host:
	// "pdsh@login: node03: ssh exited with exit code 255",
	// "pdsh@login: node04: command timeout", "clush: node03: exited with
	// exit code 255", "clush: node[03-04] (2): exited with exit code 1",
	// "clush: node05: command timeout" (ClusterShell's Clush.py).
	pdshMessageRe = lazyre.New(`^(?:pdsh|pdcp)@[^:\s]+: ([^:\s]+): (.*)$|^clush: ([^:\s]+)(?: \(\d+\))?: (.*)$`)
	// psshHeaderRe matches parallel-ssh -i's line before a host's output.
	psshHeaderRe = lazyre.New(`^\[\d+\] \d\d:\d\d:\d\d \[(SUCCESS|FAILURE)\] (\S+)(?: (.*))?$`)
	// ansibleHeaderRe matches ansible's line before a host's output (ad
	// hoc command, -a).
	ansibleHeaderRe = lazyre.New(`^(\S+) \| (CHANGED|SUCCESS|FAILED!?|UNREACHABLE!?)(?: \| rc=(-?\d+))? (?:>>|=> \{)$`)
	// ansibleOneLineRe matches ansible -o's line of a command's result:
	// host, status, rc, and the output with its newlines escaped (group
	// 4); ansibleOneLineOtherRe, its line of a host it could not reach
	// ("UNREACHABLE!: msg") or of a module's JSON report ("=> {...}").
	ansibleOneLineRe      = lazyre.New(`^(\S+) \| (CHANGED|SUCCESS|FAILED!?) \| rc=(-?\d+) \| \(stdout\) ?(.*)$`)
	ansibleOneLineOtherRe = lazyre.New(`^(\S+) \| (?:(UNREACHABLE)!: (.*)|(CHANGED|SUCCESS|FAILED!?|UNREACHABLE!?) => (\{.*\}))$`)
	// nodesetHeaderRe matches the node set line of a clush -b (dshbak -c)
	// header, between its lines of dashes: "node[01-02] (2)", "node01".
	nodesetHeaderRe = lazyre.New(`^([A-Za-z0-9][A-Za-z0-9._\-\[\],]*)(?: \(\d+\))?$`)
	// oneLineHeaderRe is such a header on one line:
	// "---------------- node[01-02] ----------------".
	oneLineHeaderRe = lazyre.New(`^-{4,} ([A-Za-z0-9][A-Za-z0-9._\-\[\],]*)(?: \(\d+\))? -{4,}$`)
)

// hostPrefix splits the host pdsh or clush puts before a line from the
// line: a host name (letters, digits, '.', '-', '_'; an IP address) or a
// ClusterShell node set ("node[01-02,05]", "gpu1,gpu3"), then ": " (or
// ":" ending an empty line). A scan, not a regular expression: it runs on
// every line of a fleet log.
func hostPrefix(b []byte) (host, rest []byte, ok bool) {
	if len(b) == 0 || !isAlnum(b[0]) {
		return nil, nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case isAlnum(c) || c == '.' || c == '-' || c == '_' || c == '[' || c == ']' || c == ',':
		case c == ':':
			if i+1 == len(b) {
				return b[:i], nil, true
			}
			if b[i+1] == ' ' {
				return b[:i], b[i+2:], true
			}
			return nil, nil, false
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

func isAlnum(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' }

// maybePdshMessage is a cheap test before pdshMessageRe.
func maybePdshMessage(b []byte) bool {
	return bytes.HasPrefix(b, []byte("pdsh@")) || bytes.HasPrefix(b, []byte("pdcp@")) || bytes.HasPrefix(b, []byte("clush: "))
}

// pdshMessage returns pdshMessageRe's submatches of b, nil when b is not
// such a line.
func pdshMessage(b []byte) [][]byte {
	if !maybePdshMessage(b) {
		return nil
	}
	return pdshMessageRe.Re().FindSubmatch(b)
}

// isDashes reports a line of dashes alone (at least 8), the rule above
// and below a clush -b or dshbak -c header.
func isDashes(b []byte) bool {
	if len(b) < 8 {
		return false
	}
	for _, c := range b {
		if c != '-' {
			return false
		}
	}
	return true
}

// detectFleet recognises a fleet log from its first lines (seg: one
// output, no prompt lines): the mode, and the layout of the hosts'
// output. A line of host prefixes counts when what follows the prefix is
// an nvidia-smi CSV header or row (sniffCSV), or, when loose (the fields
// were given, or the layout), any line with a comma; a block header counts
// when the output after it is such a line.
func detectFleet(seg []byte, loose bool) (fleetMode, parse.Format) {
	csv := func(rest []byte) parse.Format {
		rest = trimSpace(rest)
		if len(rest) == 0 || bytes.IndexByte(rest, ',') < 0 {
			return parse.FormatUnknown
		}
		if f := sniffCSV(rest); f != parse.FormatUnknown {
			return f
		}
		if loose {
			return FormatQueryGPU // the caller's fields or layout decide
		}
		return parse.FormatUnknown
	}
	header := false // a block header was seen: the next output line decides
	// clush -b's header is three lines: dashes, the node set, dashes;
	// rule counts the lines of one read so far (a line of dashes alone is
	// no header).
	rule := 0
	for lines := 0; len(seg) > 0 && lines < 32; lines++ {
		line, rest, _ := bytes.Cut(seg, []byte("\n"))
		seg = rest
		b := trimSpace(line)
		if len(b) == 0 {
			continue
		}
		switch {
		case rule == 1 && nodesetHeaderRe.Match(b):
			rule = 2
			continue
		case rule == 2 && isDashes(b):
			rule, header = 0, true
			continue
		case rule > 0:
			return fleetNone, parse.FormatUnknown
		case isDashes(b):
			rule = 1
			continue
		case maybePdshMessage(b) && pdshMessageRe.Match(b):
			continue // a host that failed first
		case oneLineHeaderRe.Match(b) || psshHeaderRe.Match(b) || ansibleHeaderRe.Match(b):
			header = true
			continue
		case maybeAnsibleOneLine(b):
			if m := ansibleOneLineRe.Re().FindSubmatch(b); m != nil {
				first, _, _ := bytes.Cut(m[4], []byte(`\n`))
				if f := csv(bytes.ReplaceAll(first, []byte(`\r`), nil)); f != parse.FormatUnknown {
					return fleetPrefix, f
				}
				continue // a host whose output is no CSV (a message)
			}
			if ansibleOneLineOtherRe.Match(b) {
				continue // a host that failed first
			}
		}
		if header {
			if f := csv(b); f != parse.FormatUnknown {
				return fleetBlocks, f
			}
			continue // a failed host's message, Stderr: lines
		}
		if _, rest, ok := hostPrefix(b); ok {
			if f := csv(rest); f != parse.FormatUnknown {
				return fleetPrefix, f
			}
			continue // "node03: ssh: connect to host ...": another host may say more
		}
		return fleetNone, parse.FormatUnknown
	}
	return fleetNone, parse.FormatUnknown
}

// sniffFleet is Sniff's test for a fleet log.
func sniffFleet(head []byte) parse.Format {
	_, f := detectFleet(head, false)
	return f
}

// maxFleetHosts bounds the hosts of one log (and a node set's expansion),
// and with them the decoders kept (a few KiB each): the largest clusters
// have about 10,000 nodes; lines of hosts past the bound are skipped and
// counted.
const maxFleetHosts = 1 << 14

// maxNamedHosts bounds the failures named one by one in warnings.
const maxNamedHosts = 8

// fleetHost is one host's part of a fleet log: its decoder and the
// Reader's instant state while another host's lines are read.
type fleetHost struct {
	name    string
	self    []*fleetHost // the host alone, as hostsOf returns it
	dec     *smiDecoder
	lastRow int // the last line that gave one of its samples
	// The Reader's time state of the host, kept here while other hosts'
	// lines are read: rows of one host are one sequence of instants
	// whatever lines of others fall between them.
	hostTime
	messages int // lines it printed instead of rows
	// noMemory: its output has no memory column (errNoMemoryFigure):
	// its lines are skipped.
	noMemory bool
}

// fleetDecoder reads a fleet log (see above).
type fleetDecoder struct {
	r     *Reader
	apps  bool
	mode  fleetMode
	hosts map[string]*fleetHost
	order []*fleetHost
	// active is the host whose time state is the Reader's.
	active *fleetHost
	// Block mode: the hosts of the block being read (a node set's, or
	// one); failed, that its header reported a failure (its lines are
	// the failure's, skipped); header, 1 after a clush -b header's first
	// line of dashes, 2 after its node set line.
	block   []*fleetHost
	failed  bool
	header  int
	pending []*fleetHost // the node set of a header being read
	// lastName and lastHosts are hostsOf's last answer.
	lastName  string
	lastHosts []*fleetHost
	failures  int // hosts reported failed
	// noisy counts the hosts that printed messages instead of rows;
	// overflow, the lines of hosts past maxFleetHosts, skipped.
	noisy, overflow int
	// base is the Reader's instant count when this decoder started (the
	// outputs before it in a paste): each host's count starts there.
	base int64
	// psshBlock: the block was opened by parallel-ssh's header, after which
	// "Stderr: " starts the host's standard error; inStderr: the lines
	// being read are that error, to the next header. stderrHosts counts
	// the hosts whose standard error was skipped.
	psshBlock, inStderr bool
	stderrHosts         int
	// stray lines belong to no host: before the first block, or without
	// a prefix in a prefixed log (and not pdsh's own).
	stray, strayLine int
	strayFirst       string
}

func newFleetDecoder(r *Reader, apps bool, mode fleetMode) *fleetDecoder {
	return &fleetDecoder{r: r, apps: apps, mode: mode, hosts: map[string]*fleetHost{}, base: r.meta.Instants}
}

// host returns the host of name, made on first use; nil past maxFleetHosts.
func (d *fleetDecoder) host(name string) *fleetHost {
	if h := d.hosts[name]; h != nil {
		return h
	}
	if len(d.hosts) >= maxFleetHosts {
		return nil
	}
	dec := newSmiDecoder(d.r, d.apps)
	dec.host = []byte(name)
	h := &fleetHost{name: name, dec: dec, hostTime: hostTime{newInstant: true, instants: d.base}}
	h.self = []*fleetHost{h}
	d.hosts[name] = h
	d.order = append(d.order, h)
	return h
}

// hostsOf returns the hosts a prefix or header names: a host, or each
// host of a node set. The last name's hosts are kept: a host's lines
// often come in runs (a tick's rows), and a line costs no allocation.
func (d *fleetDecoder) hostsOf(name []byte) []*fleetHost {
	if d.lastHosts != nil && string(name) == d.lastName {
		return d.lastHosts
	}
	if bytes.IndexByte(name, '[') < 0 && bytes.IndexByte(name, ',') < 0 {
		h := d.hosts[string(name)] // a host's name: no node set to expand
		if h == nil {
			h = d.host(string(name))
		}
		if h == nil {
			return nil
		}
		d.lastName, d.lastHosts = h.name, h.self
		return h.self
	}
	names := expandNodeset(string(name))
	out := make([]*fleetHost, 0, len(names))
	for _, n := range names {
		if h := d.host(n); h != nil {
			out = append(out, h)
		}
	}
	d.lastName, d.lastHosts = string(name), out
	return out
}

func (d *fleetDecoder) line(b []byte, n int) error {
	t := trimSpace(b)
	if len(t) == 0 {
		return nil
	}
	if maybeAnsibleOneLine(t) {
		if ok, err := d.ansibleOneLine(t, n); ok || err != nil {
			return err
		}
	}
	if d.blockHeader(t, n) {
		return nil
	}
	if d.psshBlock && len(d.block) > 0 && (d.inStderr || bytes.HasPrefix(t, []byte("Stderr:"))) {
		// parallel-ssh -i's "Stderr: " and the rest of the host's
		// standard error, to the next header: not its output.
		if !d.inStderr {
			d.inStderr = true
			d.stderrOf(d.block[0].name, "parallel-ssh's Stderr:", bytes.TrimSpace(bytes.TrimPrefix(t, []byte("Stderr:"))), n)
		}
		d.r.meta.Skipped++
		return nil
	}
	if m := pdshMessage(t); m != nil {
		tool, host, msg := "clush", m[3], m[4]
		if len(m[1]) > 0 {
			tool, host, msg = string(t[:bytes.IndexByte(t, '@')]), m[1], m[2] // pdsh or pdcp
		}
		d.hostFailed(tool, string(host), string(msg), n, false)
		return nil
	}
	if d.mode == fleetPrefix {
		host, rest, ok := hostPrefix(t)
		if !ok {
			d.skipStray(t, n)
			return nil
		}
		return d.dispatch(d.hostsOf(host), rest, n)
	}
	switch {
	case d.failed:
		d.r.meta.Skipped++ // ansible's JSON report of a failure
		if t[0] == '}' {
			d.block, d.failed = nil, false
		}
		return nil
	case d.block == nil:
		if host, rest, ok := hostPrefix(t); ok {
			// clush -b prints standard error at once, "node03: ssh: ...",
			// the gathered output at the end.
			return d.dispatch(d.hostsOf(host), rest, n)
		}
		d.skipStray(t, n)
		return nil
	}
	return d.dispatch(d.block, t, n)
}

// blockHeader handles a line that starts a host's block (or is part of a
// clush -b header) and reports whether it was one.
func (d *fleetDecoder) blockHeader(t []byte, n int) bool {
	switch d.header {
	case 1:
		if m := nodesetHeaderRe.Re().FindSubmatch(t); m != nil {
			d.pending, d.header = d.hostsOf(m[1]), 2
			return true
		}
		d.header = 0
	case 2:
		d.header = 0
		if isDashes(t) {
			d.startBlock(d.pending, false)
			return true
		}
	}
	switch t[0] {
	case '-':
		if isDashes(t) {
			d.header = 1
			return true
		}
		if m := oneLineHeaderRe.Re().FindSubmatch(t); m != nil {
			d.startBlock(d.hostsOf(m[1]), false)
			return true
		}
	case '[':
		if m := psshHeaderRe.Re().FindSubmatch(t); m != nil {
			host := psshHost(string(m[2]))
			// A failed command's output is printed all the same (one
			// stopped by a timeout: its samples until then): read.
			d.startBlock(d.hostsOf([]byte(host)), false)
			d.psshBlock = true
			if string(m[1]) == "FAILURE" {
				d.hostFailed("parallel-ssh", host, string(m[3]), n, true)
			}
			return true
		}
	}
	if bytes.HasSuffix(t, []byte(">>")) || bytes.HasSuffix(t, []byte("=> {")) {
		if m := ansibleHeaderRe.Re().FindSubmatch(t); m != nil {
			status := string(m[2])
			// "=> {": a JSON report (unreachable, a module's failure),
			// skipped to its closing brace; ">>": the command's output,
			// read even when it failed (rc=124 of a timeout: its samples
			// until then).
			report := bytes.HasSuffix(t, []byte("{"))
			d.startBlock(d.hostsOf(m[1]), report)
			if strings.HasPrefix(status, "FAILED") || strings.HasPrefix(status, "UNREACHABLE") {
				why := strings.TrimSuffix(strings.ToLower(status), "!")
				if len(m[3]) > 0 {
					why += ", rc=" + string(m[3])
				}
				d.hostFailed("ansible", string(m[1]), why, n, !report)
			}
			return true
		}
	}
	return false
}

// maybeAnsibleOneLine is a cheap test before ansible -o's expressions.
func maybeAnsibleOneLine(t []byte) bool {
	i := bytes.Index(t, []byte(" | "))
	return i > 0 && bytes.IndexByte(t[:i], ' ') < 0 && !bytes.HasSuffix(t, []byte(">>")) && !bytes.HasSuffix(t, []byte("=> {"))
}

// ansibleOneLine reads line n when it is one of ansible -o's, and reports
// whether it was: a command's result is its host's output, each line of
// it (between the escaped newlines) read as that host's, a row that
// cannot be read skipped as the Reader skips a line; a host that could not
// be reached, or a failed module's JSON report, is a failure.
func (d *fleetDecoder) ansibleOneLine(t []byte, n int) (bool, error) {
	m := ansibleOneLineRe.Re().FindSubmatch(t)
	if m == nil {
		o := ansibleOneLineOtherRe.Re().FindSubmatch(t)
		if o == nil {
			return false, nil
		}
		d.block, d.failed, d.psshBlock, d.inStderr = nil, false, false, false
		switch {
		case len(o[2]) > 0:
			d.hostFailed("ansible", string(o[1]), "unreachable: "+string(o[3]), n, false)
		case strings.HasPrefix(string(o[4]), "FAILED") || strings.HasPrefix(string(o[4]), "UNREACHABLE"):
			d.hostFailed("ansible", string(o[1]), strings.ToLower(strings.TrimSuffix(string(o[4]), "!"))+": "+snippet(o[5]), n, false)
		default:
			d.r.meta.Skipped++ // a module's report, not a command's output
		}
		return true, nil
	}
	hosts := d.hostsOf(m[1])
	d.block, d.failed, d.psshBlock, d.inStderr = nil, false, false, false // a line of its own closes a block
	out := m[4]
	var stderr []byte
	if i := bytes.LastIndex(out, []byte(" (stderr) ")); i >= 0 {
		out, stderr = out[:i], out[i+len(" (stderr) "):]
	}
	for piece := range bytes.SplitSeq(out, []byte(`\n`)) {
		piece = bytes.ReplaceAll(piece, []byte(`\r`), nil)
		if err := d.dispatch(hosts, piece, n); err != nil {
			var bad *rowError
			if !errors.As(err, &bad) {
				return true, err
			}
			d.r.skipRow(bad)
		}
	}
	if len(bytes.TrimSpace(stderr)) > 0 && len(hosts) > 0 {
		first, _, _ := bytes.Cut(stderr, []byte(`\n`))
		d.stderrOf(hosts[0].name, "ansible -o's (stderr)", first, n)
		d.r.meta.Skipped++
	}
	if strings.HasPrefix(string(m[2]), "FAILED") {
		// After its output, which this line holds: the warning says
		// where its samples end.
		d.hostFailed("ansible", string(m[1]), "failed, rc="+string(m[3]), n, false)
	}
	return true, nil
}

// stderrOf notes that host's standard error, whose first line is first,
// was skipped from line n (tool says how it was marked).
func (d *fleetDecoder) stderrOf(host, tool string, first []byte, n int) {
	d.stderrHosts++
	if d.stderrHosts <= maxNamedHosts {
		d.r.meta.Warnings.Linef(n, "host %s's standard error (after %s) is not its samples: skipped (its first line: %q)", host, tool, snippet(first))
	}
}

// psshHost is the host of parallel-ssh's pretty host name,
// "user@host:port" where the user or port differ from the defaults.
func psshHost(h string) string {
	if i := strings.LastIndexByte(h, '@'); i >= 0 {
		h = h[i+1:]
	}
	if i := strings.LastIndexByte(h, ':'); i > 0 {
		if _, err := strconv.Atoi(h[i+1:]); err == nil {
			h = h[:i]
		}
	}
	return h
}

// startBlock starts the block of hosts; failed, a block that holds a
// failure's report (ansible's JSON), not output.
func (d *fleetDecoder) startBlock(hosts []*fleetHost, failed bool) {
	d.block, d.failed, d.pending = hosts, failed, nil
	d.psshBlock, d.inStderr = false, false
	if d.mode != fleetBlocks {
		d.mode = fleetBlocks // a prefixed log turned into blocks: follow it
	}
}

// hostFailed notes that tool (the parallel shell) reported host (a host
// or a node set) failed with msg at line n: the line is skipped, and a
// warning names the host and where its samples end; before, that the
// report comes before the host's output (a block's header), which is read.
func (d *fleetDecoder) hostFailed(tool, host, msg string, n int, before bool) {
	d.r.meta.Skipped++
	d.failures++
	if d.failures > maxNamedHosts {
		return
	}
	if msg == "" {
		msg = "failed"
	}
	what := fmt.Sprintf("no sample of %s was read: it has no series", host)
	switch h := d.hosts[host]; {
	case before:
		what = "its output after this line is read as far as it goes (a command stopped by a timeout printed its samples until then); its series end where the output ends, cut by the failure, not by the GPU"
	case h != nil && h.lastRow > 0:
		what = fmt.Sprintf("its last sample is on line %d: its series end there, cut short by the failure, not by the GPU", h.lastRow)
	}
	d.r.meta.Warnings.Linef(n, "host %s failed (%s says %q): %s", host, tool, snippet([]byte(msg)), what)
}

// skipStray skips a line that names no host.
func (d *fleetDecoder) skipStray(t []byte, n int) {
	d.r.meta.Skipped++
	if d.stray == 0 {
		d.strayLine, d.strayFirst = n, snippet(t)
	}
	d.stray++
}

// dispatch reads rest, a line of the output of hosts, as each one's.
func (d *fleetDecoder) dispatch(hosts []*fleetHost, rest []byte, n int) error {
	if len(hosts) == 0 {
		d.r.meta.Skipped++
		d.overflow++ // hosts past maxFleetHosts
		return nil
	}
	for _, h := range hosts {
		if h.noMemory {
			d.r.meta.Skipped++
			continue
		}
		if err := d.lineOf(h, rest, n); err != nil {
			if errors.Is(err, errNoMemoryFigure) {
				// One host's output without a memory column (another
				// query, a host that ran something else): that host's
				// lines are skipped, the other hosts' read.
				h.noMemory = true
				d.r.meta.Skipped++
				msg := err.Error()
				var pe *parse.Error
				if errors.As(err, &pe) {
					msg = pe.Msg
				}
				d.r.meta.Warnings.Linef(n, "host %s: %s: its lines are skipped", h.name, msg)
				continue
			}
			var bad *rowError
			if errors.As(err, &bad) {
				bad.err.Msg = "host " + h.name + ": " + bad.err.Msg
			}
			return err // a row skipped once, not once per host of a node set
		}
	}
	return nil
}

// lineOf reads line n (rest: without its prefix) as host h's.
func (d *fleetDecoder) lineOf(h *fleetHost, rest []byte, n int) error {
	d.switchTo(h)
	rest = trimSpace(rest)
	if len(rest) == 0 {
		return nil
	}
	if bytes.IndexByte(rest, ',') < 0 && len(h.dec.cols) != 1 && !isHeader(rest, d.apps) {
		// Not a row of several fields nor a header: a message the host
		// printed (ssh's "Connection refused", "bash: nvidia-smi: command
		// not found", nvidia-smi's "No devices were found").
		d.r.meta.Skipped++
		if h.messages == 0 {
			if d.noisy < maxNamedHosts {
				d.r.meta.Warnings.Linef(n, "host %s printed %q instead of samples: skipped", h.name, snippet(rest))
			}
			d.noisy++
		}
		h.messages++
		return nil
	}
	rows := d.r.meta.Rows
	var err error
	done := false
	if !d.r.opt.general {
		done, err = h.dec.fastRow(rest, n)
	}
	if !done && err == nil {
		err = h.dec.line(rest, n)
	}
	if d.r.meta.Rows > rows {
		h.lastRow = n
	}
	return err
}

// isHeader reports whether b is an nvidia-smi CSV header.
func isHeader(b []byte, apps bool) bool {
	_, _, ok := headerFields(b, apps)
	return ok
}

// switchTo makes h's time state the Reader's (see fleetHost).
func (d *fleetDecoder) switchTo(h *fleetHost) {
	r := d.r
	if a := d.active; a == h {
		return
	} else if a != nil {
		a.save(r)
	}
	h.load(r)
	d.active = h
}

func (d *fleetDecoder) end(n int) error {
	if d.active != nil {
		d.switchTo(&fleetHost{}) // saves the active host's state
		d.active = nil
	}
	instants := d.base
	for _, h := range d.order {
		instants = max(instants, h.instants) // a series has at most this many samples
		for _, c := range h.dec.hostTimes {
			// The hosts of a host column in its lines (smiDecoder.colHost):
			// h's own state is the one active when h was left.
			instants = max(instants, c.instants)
		}
	}
	d.r.meta.Instants = instants
	if d.failures > maxNamedHosts {
		d.r.meta.Warnings.Addf("%d hosts failed in all (the first %d are named on their lines)", d.failures, maxNamedHosts)
	}
	if d.noisy > maxNamedHosts {
		d.r.meta.Warnings.Addf("%d hosts printed messages instead of samples (the first %d are named on their lines)", d.noisy, maxNamedHosts)
	}
	if d.overflow > 0 {
		d.r.meta.Warnings.Addf("%d lines of hosts past the first %d were skipped: read the log in parts of fewer hosts", d.overflow, maxFleetHosts)
	}
	if d.stray > 0 {
		what := "without a host prefix"
		if d.mode == fleetBlocks {
			what = "before the first host's header"
		}
		d.r.meta.Warnings.Add(parse.InlineNote(d.strayLine, -1, "%d lines %s were skipped (the first, line %d: %q): whose output they are is not known", d.stray, what, d.strayLine, d.strayFirst))
	}
	if len(d.order) > 0 && d.r.meta.Rows > 0 {
		sampled := 0
		for _, h := range d.order {
			if h.lastRow > 0 {
				sampled++
			}
		}
		d.r.meta.Warnings.Addf("a fleet log (%s): %d hosts named, %d with samples; each host's GPUs are series of their own, named by host", d.tools(), len(d.order), sampled)
		return nil
	}
	for _, h := range d.order {
		if h.dec.cols != nil {
			return h.dec.end(n) // a header without rows, or messages only
		}
	}
	return d.r.errorf(n, "no samples: no host's output held an nvidia-smi CSV row (%d hosts named, %d failed)", len(d.order), d.failures)
}

// tools names the parallel shells whose layout the log is in, for the
// warning that says the log was read as a fleet's.
func (d *fleetDecoder) tools() string {
	if d.mode == fleetPrefix {
		return "lines that name their host, as pdsh, clush and ansible -o print them"
	}
	return "a header before each host's output, as clush -b, dshbak -c, parallel-ssh -i and ansible print them"
}

// expandNodeset returns the hosts of a ClusterShell (pdsh, Slurm) node
// set: "node[01-03,07]" is node01, node02, node03, node07 (zero padding
// kept), "gpu1,gpu3" two hosts, "rack[1-2]n[1-2]" four; a name that is
// not a node set, or one of more than maxFleetHosts hosts, is itself.
func expandNodeset(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '[':
				depth++
				continue
			case ']':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		part := s[start:i]
		start = i + 1
		if part == "" {
			continue
		}
		names, ok := expandPattern(part, maxFleetHosts-len(out))
		if !ok {
			return []string{s}
		}
		out = append(out, names...)
	}
	if len(out) == 0 {
		return []string{s}
	}
	return out
}

// expandPattern expands one node set element, "node[01-03]x[1-2]", into at
// most limit names; ok is false when it is not one or has more.
func expandPattern(p string, limit int) (_ []string, ok bool) {
	i := strings.IndexByte(p, '[')
	if i < 0 {
		if strings.ContainsAny(p, "]") || limit < 1 {
			return nil, false
		}
		return []string{p}, true
	}
	j := strings.IndexByte(p[i:], ']')
	if j < 0 {
		return nil, false
	}
	j += i
	prefix, ranges, suffix := p[:i], p[i+1:j], p[j+1:]
	tails := []string{""}
	if suffix != "" {
		var ok bool
		if tails, ok = expandPattern(suffix, limit); !ok {
			return nil, false
		}
	}
	var out []string
	for _, r := range strings.Split(ranges, ",") {
		lo, hi, found := strings.Cut(r, "-")
		if !found {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a < 0 || b < a || lo == "" {
			return nil, false
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo) // zero-padded: node01
		}
		for k := a; k <= b; k++ {
			for _, t := range tails {
				if len(out) >= limit {
					return nil, false
				}
				out = append(out, fmt.Sprintf("%s%0*d%s", prefix, width, k, t))
			}
		}
	}
	return out, true
}

// useFleet makes the decoder of a CSV layout f a fleetDecoder when seg,
// the start of the output it reads, is a fleet log (detectFleet).
func (r *Reader) useFleet(f parse.Format, seg []byte) {
	if f != FormatQueryGPU && f != FormatQueryApps {
		return
	}
	seg = bytes.TrimPrefix(seg, []byte("\xef\xbb\xbf"))
	if bytes.IndexByte(seg, 0x1b) >= 0 {
		seg = stripANSI(nil, seg) // clush --color=always
	}
	loose := len(r.opt.fields) > 0 || r.opt.format != parse.FormatUnknown
	if mode, _ := detectFleet(seg, loose); mode != fleetNone {
		r.dec = newFleetDecoder(r, f == FormatQueryApps, mode)
	}
}
