package nvml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
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
// kept, and Metadata.Cut says where it stops. Other XML errors name their
// line.
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
	if bytes.HasPrefix(t, []byte("<?xml")) && d.inDoc {
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
	if d.inDoc {
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
	d.r.meta.Clock = ClockAbsolute
	return nil
}

// xmlGPU is one <gpu> element being read.
type xmlGPU struct {
	name, uuid []byte
	mem        sample
	noUsed     string // used's text when it is no figure ("N/A")
	noTotal    bool
	memDone    bool // </fb_memory_usage> read
	procsDone  bool // </processes> read
	// The process_info being read.
	pid        int64
	hasPID     bool
	procName   []byte
	procMem    []byte
	hasProcMem bool
}

// flush reads the buffered document; whole is false when it stopped
// before its </nvidia_smi_log>.
func (d *smiXMLDecoder) flush(whole bool) error {
	doc, first := d.doc, d.docLine
	d.doc, d.inDoc = d.doc[:0], false
	d.docs++
	dec := xml.NewDecoder(bytes.NewReader(doc))
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
	now := func() int64 {
		if hasTS {
			return ts
		}
		return d.r.tickTime(int64(d.docs - 1))
	}
	emitGPU := func() {
		if g == nil || !g.memDone || (!g.mem.hasUsed && g.noUsed == "") {
			return
		}
		if !g.mem.hasUsed && d.r.usedPlaceholder == "" {
			d.r.usedPlaceholder, d.r.usedField = g.noUsed, "fb_memory_usage's used"
		}
		if !g.mem.hasTotal && g.noTotal {
			d.r.totalPlaceholders++
		}
		s := g.mem
		s.timeUs, s.gpu, s.hasGPU, s.uuid, s.gpuName = now(), idx, true, g.uuid, g.name
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
			case g == nil:
			case pathIs(path, "nvidia_smi_log", "gpu", "product_name"):
				g.name = append(g.name[:0], v...)
			case pathIs(path, "nvidia_smi_log", "gpu", "uuid"):
				g.uuid = append(g.uuid[:0], v...)
			case len(path) == 4 && pathIs(path[:3], "nvidia_smi_log", "gpu", "fb_memory_usage"):
				d.fbValue(g, path[3], v)
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
				}
			case pathIs(path, "nvidia_smi_log", "gpu", "processes", "process_info"):
				if g.hasPID && g.hasProcMem {
					d.process(g, idx, now())
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
	cut := eof && (!whole || synErr != nil)
	switch {
	case cut:
		why := fmt.Sprintf("the nvidia-smi XML document from line %d stops at line %d before its end (</nvidia_smi_log>): the excerpt is cut there, so GPUs and processes after it are missing", first, d.lastLine)
		if g != nil && !g.memDone {
			why = fmt.Sprintf("the nvidia-smi XML document from line %d stops at line %d inside GPU %d's section, before its memory ends: GPU %d and what follows are missing", first, d.lastLine, idx, idx)
		}
		d.r.meta.Warnings.Linef(d.lastLine, "%s", why)
		if d.r.meta.Cut == "" {
			d.r.meta.Cut = why
		}
		if d.gpus > gpusBefore {
			// Its GPUs were read, its process list maybe not whole.
			d.r.meta.ProcessesPartialUs = append(d.r.meta.ProcessesPartialUs, now())
		}
	case errors.Is(err, io.EOF):
	case synErr != nil:
		// Its line counts from the document's first line.
		return d.r.errorf(first+max(synErr.Line, 1)-1, "nvidia-smi XML: %s", synErr.Msg)
	case err != nil:
		return d.r.errorf(lineAt(), "nvidia-smi XML: %v", err)
	}
	if procsAll && idx >= 0 && !cut {
		d.r.meta.ProcessesListedUs = append(d.r.meta.ProcessesListedUs, now())
	}
	return nil
}

// fbValue reads one child of a GPU's fb_memory_usage ("143771 MiB").
func (d *smiXMLDecoder) fbValue(g *xmlGPU, key string, v []byte) {
	n, ok := parseSize(v, MiB)
	if !ok {
		if isPlaceholder(v) || bytes.EqualFold(v, []byte("Not Supported")) {
			switch key {
			case "used":
				g.noUsed = string(v)
			case "total":
				g.noTotal = true
			}
		}
		return
	}
	switch key {
	case "total":
		g.mem.total, g.mem.hasTotal = n, true
	case "reserved":
		g.mem.reserved, g.mem.hasReserved = n, true
	case "used":
		g.mem.used, g.mem.hasUsed = n, true
	case "free":
		g.mem.free, g.mem.hasFree = n, true
	}
}

// process emits one process_info of GPU idx at time t.
func (d *smiXMLDecoder) process(g *xmlGPU, idx int32, t int64) {
	s := sample{timeUs: t, gpu: idx, hasGPU: true, uuid: g.uuid, pid: g.pid, hasPID: true, process: g.procName}
	if v, ok := parseSize(g.procMem, MiB); ok {
		s.used, s.hasUsed = v, true
	}
	d.r.emit(&s)
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
