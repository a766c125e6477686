package nvml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
)

// nvidia-smi -q -x (FormatNvidiaSmiXML): the -q report as XML, one
// <nvidia_smi_log> document per output (-l N repeats it), each under its
// <?xml ...?> line and DOCTYPE (nvsmi_device_v10.dtd ... v13.dtd as the
// driver grows; the elements read here are in all of them):
//
//	<nvidia_smi_log>
//	  <timestamp>Fri Dec  4 05:48:55 2026</timestamp>   ctime, WithLocation's zone
//	  <gpu id="00000000:00:06.0">                        one per GPU, in index order
//	    <product_name>NVIDIA H200</product_name>
//	    <uuid>GPU-...</uuid>  <minor_number>0</minor_number>
//	    <fb_memory_usage>
//	      <total>143771 MiB</total> <reserved>616 MiB</reserved>   (reserved: R510 and later)
//	      <used>6671 MiB</used> <free>136486 MiB</free>
//	    </fb_memory_usage>
//	    <processes>
//	      <process_info><pid>614</pid><process_name>python3</process_name>
//	        <used_memory>6662 MiB</used_memory></process_info>
//	    </processes>
//	  </gpu>
//	</nvidia_smi_log>
//
// Each document is one sampling instant at its timestamp. A GPU's index is
// its element's place in the document, as in -q's text and nvidia-smi's
// --id; its minor number (/dev/nvidiaN) can differ and is not the index.
// Used, total, free and reserved are the frame buffer's (MiB, as bytes);
// the convention follows from total = used + free (+ reserved) as for -q.
// A MIG device's fb_memory_usage (under mig_devices) is its GPU's memory
// and is not read. A process whose used_memory is "N/A" (WDDM) is listed,
// its memory unknown. A document whose every GPU has its <processes>
// element whole lists every process (Metadata.ProcessesListedUs).
//
// A document is read whole before its samples are made, up to
// maxXMLDocument bytes. A document cut short (a paste, a log stopped) is
// read up to the cut: the GPUs whose fb_memory_usage ended before it are
// kept, and Metadata.Cut says where it stops. An excerpt without its
// root (a paste of just <gpu id=...> ... </gpu>) or cut at its start
// (its first lines inside a <gpu>, end tags whose start tags are not in
// it) is read as if the elements it starts inside were open: the end
// tags it closes without opening them say which (innermost first), and
// an fb_memory_usage or processes is a gpu's. Its GPUs' indices are not
// known there (GPUs before it may be missing): they are named by UUID
// alone. One cut at its start says so in Metadata.Cut. Other XML errors
// name their line.
type smiXMLDecoder struct {
	r *Reader
	// doc holds the current document's lines from docLine on; inDoc:
	// its root element has started.
	doc     []byte
	docLine int
	inDoc   bool
	// docs counts the documents read; gpus, the GPU samples made;
	// lastLine, the document's last line read.
	docs, gpus int
	lastLine   int
	// timed: a document gave its <timestamp>.
	timed bool
	// migLine: the line of the first document with a process_info in a
	// MIG GPU instance (gpu_instance_id); 0 when none.
	migLine int
}

// maxXMLDocument bounds one nvidia_smi_log document: a -q -x of an
// eight-GPU host with a hundred processes is under 1 MiB.
const maxXMLDocument = 16 << 20

// maxXMLDepth bounds the elements' nesting (nvidia-smi's is under 10).
const maxXMLDepth = 64

func newSmiXMLDecoder(r *Reader) *smiXMLDecoder { return &smiXMLDecoder{r: r} }

func (d *smiXMLDecoder) line(b []byte, n int) error {
	t := trimSpace(b)
	// A new document's declaration ends the one before it when that one
	// was cut before its end tag.
	if bytes.HasPrefix(t, []byte("<?xml")) && len(d.doc) > 0 {
		if err := d.flush(false); err != nil {
			return err
		}
	}
	if len(d.doc) == 0 {
		if len(t) == 0 || t[0] != '<' {
			return nil // a prompt or a blank line between documents
		}
		d.docLine = n
	}
	if len(d.doc)+len(b) > maxXMLDocument {
		return d.r.errorf(d.docLine, "an nvidia-smi XML document (from line %d) longer than %d MiB: not nvidia-smi -q -x output", d.docLine, maxXMLDocument>>20)
	}
	d.doc = append(append(d.doc, b...), '\n')
	d.lastLine = n
	if bytes.Contains(t, []byte("<nvidia_smi_log")) {
		d.inDoc = true
	}
	if bytes.Contains(t, []byte("</nvidia_smi_log>")) {
		return d.flush(true)
	}
	return nil
}

func (d *smiXMLDecoder) end(n int) error {
	if len(d.doc) > 0 {
		if err := d.flush(false); err != nil {
			return err
		}
	}
	if d.gpus == 0 {
		what := "no <fb_memory_usage> of a <gpu> in it"
		if d.r.meta.Cut != "" {
			what = d.r.meta.Cut
		}
		return d.r.errorf(max(n, 1), "no GPU memory in this nvidia-smi XML (nvidia-smi -q -x): %s", what)
	}
	if d.migLine > 0 {
		d.r.meta.Warnings.Addf("nvidia-smi's process_info elements name MIG GPU instances (gpu_instance_id): each process is reported with its instance (mig_gi and mig_ci in JSON); the instances' own size and use (mig_devices) are not read, and the GPU's fb_memory_usage is the whole GPU's, not any instance's")
	}
	d.r.meta.Clock = ClockAbsolute
	if !d.timed {
		d.r.meta.Clock = ClockRowOrder
		d.r.meta.Warnings.Addf("the nvidia-smi XML has no <timestamp> (an excerpt without its <nvidia_smi_log> header): its documents are placed %v apart by order", d.r.opt.interval)
	}
	return nil
}

// xmlGPU is one <gpu> element being read.
type xmlGPU struct {
	name, uuid []byte
	mem        fbMem
	memDone    bool // </fb_memory_usage> read
	procsDone  bool // </processes> read
	// The process_info being read.
	pid        int64
	hasPID     bool
	procName   []byte
	procMem    []byte
	hasProcMem bool
	// gi and ci: the process_info's gpu_instance_id and
	// compute_instance_id, -1 for N/A or none.
	gi, ci int32
}

// flush reads the buffered document; whole is false when it stopped
// before its </nvidia_smi_log>.
func (d *smiXMLDecoder) flush(whole bool) error {
	doc, first := d.doc, d.docLine
	d.doc, d.inDoc = d.doc[:0], false
	d.docs++
	x, perr := openedBefore(doc)
	if perr != nil {
		return d.r.errorf(first+max(perr.Line, 1)-1, "nvidia-smi XML: %s", perr.Msg)
	}
	open := x.open
	// An excerpt (no root, or cut inside one of the root's children): its
	// GPUs' places are not their indices. A document that lost only its
	// root's start tag holds every GPU.
	startCut := len(open) > 1
	excerpt := startCut || x.rootAdded
	var pre, post []byte
	for _, e := range open {
		pre = append(append(append(pre, '<'), e...), '>')
	}
	if x.closeRoot {
		post = []byte("</nvidia_smi_log>")
	}
	dec := xml.NewDecoder(io.MultiReader(bytes.NewReader(pre), bytes.NewReader(doc), bytes.NewReader(post)))
	dec.Strict = true
	// The DOCTYPE names an external DTD that is not fetched; nvidia-smi
	// writes no entity of its own.
	var (
		path     []string
		text     []byte
		ts       int64
		hasTS    bool
		g        *xmlGPU
		idx      int32 = -1
		procsAll       = true
	)
	lineAt := func() int {
		l, _ := dec.InputPos()
		return first + l - 1
	}
	d.r.newInstant = true // one document, one sampling instant
	gpusBefore := d.gpus
	if startCut {
		why := fmt.Sprintf("the nvidia-smi XML excerpt from line %d starts inside <%s> (its start tag is not in it): the excerpt is cut there, so GPUs and processes before it are missing, and the GPUs' indices are not known", first, open[len(open)-1])
		d.r.meta.Warnings.Linef(first, "%s", why)
		if d.r.meta.Cut == "" {
			d.r.meta.Cut = why
		}
	} else if excerpt {
		d.r.meta.Warnings.Linef(first, "the nvidia-smi XML from line %d has no <nvidia_smi_log> root (an excerpt of its <gpu> sections): other GPUs may be missing, and the GPUs' indices are not known; they are named by UUID", first)
	}
	now := func() int64 {
		if hasTS {
			return ts
		}
		return d.r.tickTime(int64(d.docs - 1))
	}
	emitGPU := func() {
		if g == nil || !g.memDone || !g.mem.gpu() {
			return
		}
		g.mem.note(d.r, "fb_memory_usage's used")
		s := g.mem.s
		s.timeUs, s.gpu, s.hasGPU, s.uuid, s.gpuName = now(), idx, !excerpt, g.uuid, g.name
		d.r.emit(&s)
		d.gpus++
	}
	var err error
	for {
		var tok xml.Token
		tok, err = dec.Token()
		if err != nil {
			break
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if len(path) >= maxXMLDepth {
				return d.r.errorf(lineAt(), "nvidia-smi XML: elements nested deeper than %d: not nvidia-smi -q -x output", maxXMLDepth)
			}
			path = append(path, e.Name.Local)
			text = text[:0]
			switch {
			case pathIs(path, "nvidia_smi_log", "gpu"):
				idx++
				g = &xmlGPU{}
			case g != nil && pathIs(path, "nvidia_smi_log", "gpu", "processes", "process_info"):
				g.hasPID, g.hasProcMem = false, false
				g.procName, g.procMem = g.procName[:0], g.procMem[:0]
				g.gi, g.ci = -1, -1
			}
		case xml.CharData:
			if len(text)+len(e) <= 4096 {
				text = append(text, e...)
			}
		case xml.EndElement:
			v := trimSpace(text)
			switch {
			case pathIs(path, "nvidia_smi_log", "timestamp"):
				ts, hasTS = d.r.parseCtime(v)
				d.timed = d.timed || hasTS
			case g == nil:
			case pathIs(path, "nvidia_smi_log", "gpu", "product_name"):
				g.name = append(g.name[:0], v...)
			case pathIs(path, "nvidia_smi_log", "gpu", "uuid"):
				g.uuid = append(g.uuid[:0], v...)
			case len(path) == 4 && pathIs(path[:3], "nvidia_smi_log", "gpu", "fb_memory_usage"):
				g.mem.set(path[3], v)
			case pathIs(path, "nvidia_smi_log", "gpu", "fb_memory_usage"):
				g.memDone = true
				emitGPU()
			case len(path) == 5 && pathIs(path[:4], "nvidia_smi_log", "gpu", "processes", "process_info"):
				switch path[4] {
				case "pid":
					g.pid, g.hasPID = parseInt(v)
				case "process_name":
					g.procName = append(g.procName[:0], v...)
				case "used_memory":
					g.procMem, g.hasProcMem = append(g.procMem[:0], v...), true
				case "gpu_instance_id", "compute_instance_id":
					n, ok := parseInt(v)
					if !ok || n < 0 || n > 1<<20 {
						n = -1
					}
					if path[4] == "gpu_instance_id" {
						g.gi = int32(n)
					} else {
						g.ci = int32(n)
					}
				}
			case pathIs(path, "nvidia_smi_log", "gpu", "processes", "process_info"):
				if g.hasPID && g.hasProcMem {
					d.process(g, idx, !excerpt, now())
				}
			case pathIs(path, "nvidia_smi_log", "gpu", "processes"):
				g.procsDone = true
			case pathIs(path, "nvidia_smi_log", "gpu"):
				procsAll = procsAll && g.procsDone
				g = nil
			}
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
			text = text[:0]
		}
	}
	// A document cut short ends with elements open: the decoder's
	// "unexpected EOF".
	var synErr *xml.SyntaxError
	eof := err == nil || errors.Is(err, io.EOF) || errors.As(err, &synErr) && synErr.Msg == "unexpected EOF"
	cut := eof && (!(whole || x.closeRoot) || synErr != nil)
	switch {
	case cut:
		why := fmt.Sprintf("the nvidia-smi XML document from line %d stops at line %d before its end (</nvidia_smi_log>): the excerpt is cut there, so GPUs and processes after it are missing", first, d.lastLine)
		if g != nil && !g.memDone {
			gpu := fmt.Sprintf("GPU %d", idx)
			if excerpt {
				gpu = fmt.Sprintf("GPU #%d of the excerpt", idx+1) // not its index
			}
			why = fmt.Sprintf("the nvidia-smi XML document from line %d stops at line %d inside %s's section, before its memory ends: %s and what follows are missing", first, d.lastLine, gpu, gpu)
		}
		d.r.meta.Warnings.Linef(d.lastLine, "%s", why)
		if d.r.meta.Cut == "" {
			d.r.meta.Cut = why
		}
		if d.gpus > gpusBefore {
			// Its GPUs were read, its process list maybe not whole.
			d.r.meta.ProcessesPartialUs = append(d.r.meta.ProcessesPartialUs, now())
		}
	case startCut && d.gpus > gpusBefore:
		d.r.meta.ProcessesPartialUs = append(d.r.meta.ProcessesPartialUs, now())
	case errors.Is(err, io.EOF):
	case synErr != nil:
		// Its line counts from the document's first line.
		return d.r.errorf(first+max(synErr.Line, 1)-1, "nvidia-smi XML: %s", synErr.Msg)
	case err != nil:
		return d.r.errorf(lineAt(), "nvidia-smi XML: %v", err)
	}
	if procsAll && idx >= 0 && !cut && !excerpt {
		d.r.meta.ProcessesListedUs = append(d.r.meta.ProcessesListedUs, now())
	}
	return nil
}

// process emits one process_info of GPU idx (when indexed: else its
// UUID alone names it) at time t.
func (d *smiXMLDecoder) process(g *xmlGPU, idx int32, indexed bool, t int64) {
	s := sample{timeUs: t, gpu: idx, hasGPU: indexed, uuid: g.uuid, pid: g.pid, hasPID: true, process: g.procName}
	if v, ok := parseSize(g.procMem, MiB); ok {
		s.used, s.hasUsed = v, true
	}
	d.r.emit(&s)
	if g.gi >= 0 && indexed {
		d.r.migProcess(MIGProcess{GPU: idx, PID: g.pid, GI: g.gi, CI: g.ci})
		if d.migLine == 0 {
			d.migLine = d.r.line
		}
	}
}

// xmlParents names the element an nvidia-smi -q -x element read here
// sits in, for an excerpt that starts inside it without its start tag.
var xmlParents = map[string]string{
	"gpu":             "nvidia_smi_log",
	"timestamp":       "nvidia_smi_log",
	"fb_memory_usage": "gpu",
	"processes":       "gpu",
	"process_info":    "processes",
	"product_name":    "gpu",
	"uuid":            "gpu",
}

// openedBefore reads doc's tokens and returns the elements, outermost
// first, that were open where it starts: the end tags it closes without
// opening them (an excerpt cut at its start), completed up to the root by
// xmlParents; just the root when doc's top-level elements are not it (an
// excerpt of <gpu> sections); none for a whole document. Errors: an
// end tag that closes another element than the one open (the decoder's
// syntax error: its line counts from doc's first). A syntax error at the
// end (a cut inside a tag) ends the scan: the reading after says it.
func openedBefore(doc []byte) (x xmlOpened, err *xml.SyntaxError) {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	var stack, closed []string
	topLevel := ""
	// siblings: the elements started at the excerpt's outer level after
	// its last end tag without a start (the outermost closed element's
	// siblings; with none closed, the top-level elements).
	var siblings []string
	for {
		tok, terr := dec.RawToken()
		if terr != nil {
			var se *xml.SyntaxError
			if errors.As(terr, &se) && se.Msg != "unexpected EOF" {
				return x, se
			}
			break
		}
		if len(stack)+len(closed) >= maxXMLDepth {
			l, _ := dec.InputPos()
			return x, &xml.SyntaxError{Msg: fmt.Sprintf("elements nested deeper than %d: not nvidia-smi -q -x output", maxXMLDepth), Line: l}
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 && topLevel == "" {
				topLevel = e.Name.Local
			}
			if len(stack) == 0 && len(siblings) < maxXMLDepth {
				siblings = append(siblings, e.Name.Local)
			}
			stack = append(stack, e.Name.Local)
		case xml.EndElement:
			switch n := len(stack); {
			case n == 0:
				closed = append(closed, e.Name.Local)
				siblings = siblings[:0]
			case stack[n-1] != e.Name.Local:
				l, _ := dec.InputPos()
				return x, &xml.SyntaxError{Msg: fmt.Sprintf("element <%s> closed by </%s>", stack[n-1], e.Name.Local), Line: l}
			default:
				stack = stack[:n-1]
			}
		}
	}
	outer := topLevel
	if len(closed) > 0 {
		outer = closed[len(closed)-1]
	}
	x.open = closed
	if outer != "nvidia_smi_log" {
		// Added: the elements the outermost sits in, then the root.
		added := 0
		for p := parentOf(outer, siblings); p != "" && p != "nvidia_smi_log"; p = xmlParents[p] {
			x.open = append(x.open, p)
			added++
		}
		x.open = append(x.open, "nvidia_smi_log")
		x.rootAdded = true
		x.closeRoot = added == 0 && len(stack) == 0
	}
	slices.Reverse(x.open)
	return x, nil
}

// parentOf names the element that outer, the outermost element an
// excerpt starts inside or at, sits in: xmlParents' where it is known;
// else that of the first of its siblings (the elements beside it in the
// excerpt) that xmlParents knows, since siblings share their parent: an
// excerpt that starts inside <clocks_event_reasons> and goes on to
// <fb_memory_usage> is inside a <gpu> (influxdata/telegraf#5546). ""
// when none is known.
func parentOf(outer string, siblings []string) string {
	if p := xmlParents[outer]; p != "" {
		return p
	}
	for _, s := range siblings {
		if p := xmlParents[s]; p != "" {
			return p
		}
	}
	return ""
}

// xmlOpened is what openedBefore finds of an excerpt's start. open: the
// elements open where it starts, outermost first. rootAdded: the root is
// not in the excerpt (neither its start tag nor its end tag). closeRoot:
// the root was added and the excerpt closes every element it opens and
// no other was added, so the root's end tag is added after it; another
// left open is a cut at the end.
type xmlOpened struct {
	open                 []string
	rootAdded, closeRoot bool
}

// pathIs reports whether path is the elements want, from the root.
func pathIs(path []string, want ...string) bool {
	if len(path) != len(want) {
		return false
	}
	for i := range want {
		if path[i] != want[i] {
			return false
		}
	}
	return true
}
