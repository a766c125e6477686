package sanitizer

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpuleak/gpuleak/parse"
)

// xmlRoot is the root element of compute-sanitizer's XML output.
const xmlRoot = "ComputeSanitizerOutput"

// errEncoding is returned for an XML encoding other than UTF-8.
var errEncoding = errors.New("unsupported encoding")

// Bounds of the XML reader. compute-sanitizer's records hold a few short
// elements and a backtrace of tens of frames; these are far above that,
// and keep a hostile file (one gigabyte-long text node, a record of
// millions of elements) from exhausting memory.
const (
	// maxXMLToken is the most bytes of one token: a text node, a tag with
	// its attributes, a comment, a CDATA section.
	maxXMLToken = 4 << 20
	// maxRecordText is the most text kept from one <record>.
	maxRecordText = 16 << 20
	// maxRecordElements is the most elements in one <record>.
	maxRecordElements = 1 << 16
	// maxXMLDepth is the deepest nesting of elements.
	maxXMLDepth = 64
)

// errTokenTooLong ends reading a token longer than maxXMLToken.
var errTokenTooLong = errors.New("token too long")

// tokenLimit counts the bytes the XML decoder reads (it reads through
// ReadByte when its reader has one) and fails once one token has taken
// more than maxXMLToken of them: encoding/xml buffers a whole text node,
// comment or tag before returning it.
type tokenLimit struct {
	br *bufio.Reader
	n  int
}

func (l *tokenLimit) ReadByte() (byte, error) {
	if l.n >= maxXMLToken {
		return 0, errTokenTooLong
	}
	l.n++
	return l.br.ReadByte()
}

func (l *tokenLimit) Read(p []byte) (int, error) {
	if l.n >= maxXMLToken {
		return 0, errTokenTooLong
	}
	p = p[:min(len(p), maxXMLToken-l.n)]
	n, err := l.br.Read(p)
	l.n += n
	return n, err
}

// xmlSource reads records from compute-sanitizer --xml output, one token
// at a time: no token, record or nesting outgrows the bounds above.
type xmlSource struct {
	name    string
	dec     *xml.Decoder
	lim     *tokenLimit
	started bool
	closed  bool
	depth   int // elements open inside the root
	ru      *run
	// warnings takes the note of a file cut short after whole records.
	warnings *parse.Warnings
}

func newXMLSource(r io.Reader, name string) *xmlSource {
	lim := &tokenLimit{br: bufio.NewReaderSize(r, 64<<10)}
	dec := xml.NewDecoder(lim)
	dec.CharsetReader = func(charset string, in io.Reader) (io.Reader, error) {
		switch strings.ToLower(charset) {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return in, nil
		}
		return nil, fmt.Errorf("%w %q (compute-sanitizer writes UTF-8)", errEncoding, charset)
	}
	return &xmlSource{name: name, dec: dec, lim: lim, ru: &run{tool: ToolComputeSanitizer, processes: 1}}
}

func (s *xmlSource) runs() []*run {
	if !s.started {
		return nil
	}
	return []*run{s.ru}
}

func (s *xmlSource) errAt(off int64, err error, format string, args ...any) error {
	return &parse.Error{File: s.name, Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

// token returns the next token, its data valid until the next call, and
// the offset it starts at; errors are positioned. inRecord says a record
// is open, for the message of a truncated file.
func (s *xmlSource) token(inRecord bool) (xml.Token, int64, error) {
	off := s.dec.InputOffset()
	s.lim.n = 0
	tok, err := s.dec.Token()
	if s.lim.n >= maxXMLToken {
		// The decoder may return the part read before the limit as a
		// token of its own, and the error only next time.
		err = errTokenTooLong
	}
	if err == nil {
		return tok, off, nil
	}
	switch {
	case errors.Is(err, io.EOF):
		return nil, off, err
	case errors.Is(err, errTokenTooLong):
		return nil, off, s.errAt(off, err, "an XML token (text, tag or comment) of %d MiB or more: not compute-sanitizer XML", maxXMLToken>>20)
	case errors.Is(err, errEncoding):
		return nil, off, s.errAt(s.dec.InputOffset(), err, "XML declaration")
	case !s.started:
		return nil, off, s.errAt(s.dec.InputOffset(), errors.Join(parse.ErrNotMine, err), "not XML")
	case isEOFError(err) && inRecord:
		return nil, off, s.errAt(s.dec.InputOffset(), io.ErrUnexpectedEOF, "truncated XML: the file ends inside a <record>")
	case isEOFError(err):
		return nil, off, s.errAt(s.dec.InputOffset(), io.ErrUnexpectedEOF, "truncated XML: the file ends inside an element")
	}
	return nil, off, s.errAt(s.dec.InputOffset(), err, "malformed XML")
}

func (s *xmlSource) next() (*record, error) {
	rec, err := s.nextRecord()
	// A file cut short (a job killed, an upload stopped) after whole
	// records is read up to the cut, as the text form is: the records
	// before it stand, and a warning says the report was read in part.
	// Cut before any record, it is an error: nothing could be read.
	var pe *parse.Error
	if err != nil && s.ru.records > 0 && s.warnings != nil && errors.Is(err, io.ErrUnexpectedEOF) && errors.As(err, &pe) {
		s.warnings.Once("cut", parse.Note("read in part: byte offset %d: %s; the whole records before it (%d) are read, what came after the cut is missing",
			pe.Offset, strings.TrimSuffix(pe.Msg, ": unexpected EOF"), s.ru.records))
		s.closed = true
		return nil, nil
	}
	return rec, err
}

func (s *xmlSource) nextRecord() (*record, error) {
	for {
		tok, off, err := s.token(false)
		if errors.Is(err, io.EOF) {
			switch {
			case !s.started && off == 0:
				return nil, &parse.Error{File: s.name, Offset: 0, Msg: "empty input", Err: parse.ErrNotMine}
			case !s.started:
				return nil, s.errAt(off, parse.ErrNotMine, "no <%s> element: not compute-sanitizer XML", xmlRoot)
			case !s.closed:
				return nil, s.errAt(off, io.ErrUnexpectedEOF, "truncated: <%s> is not closed", xmlRoot)
			}
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if s.closed {
				return nil, s.errAt(off, nil, "element <%s> after the end of <%s>", t.Name.Local, xmlRoot)
			}
			if !s.started {
				if t.Name.Local != xmlRoot {
					return nil, s.errAt(off, parse.ErrNotMine, "root element is <%s>, not <%s>", t.Name.Local, xmlRoot)
				}
				s.started = true
				continue
			}
			if t.Name.Local != "record" || s.depth > 0 {
				// Elements other than records are skipped, one token
				// at a time.
				if s.depth++; s.depth > maxXMLDepth {
					return nil, s.errAt(off, nil, "elements nested deeper than %d", maxXMLDepth)
				}
				continue
			}
			n, err := s.readRecord(off)
			if err != nil {
				return nil, err
			}
			rec, err := s.convert(n, off)
			if err != nil {
				return nil, err
			}
			s.ru.records++
			return rec, nil
		case xml.EndElement:
			switch {
			case s.depth > 0:
				s.depth--
			case s.started:
				s.closed = true
			}
		case xml.CharData:
			if !s.started && len(bytes.TrimSpace(t)) > 0 {
				return nil, s.errAt(off, parse.ErrNotMine, "text before the root element: not compute-sanitizer XML")
			}
		}
	}
}

// xmlNode is an element of a record: its name, the text directly inside
// it, and its child elements.
type xmlNode struct {
	name string
	text []byte
	kids []*xmlNode
}

// child returns the first child element named name, or nil.
func (n *xmlNode) child(name string) *xmlNode {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

// get returns the text of the child element named name, "" when none.
func (n *xmlNode) get(name string) string {
	if c := n.child(name); c != nil {
		return string(c.text)
	}
	return ""
}

// readRecord reads the <record> element whose start tag was just read,
// at off, into a tree, within maxRecordText, maxRecordElements and
// maxXMLDepth.
func (s *xmlSource) readRecord(off int64) (*xmlNode, error) {
	root := &xmlNode{name: "record"}
	stack := []*xmlNode{root}
	text, elements := 0, 1
	for len(stack) > 0 {
		tok, toff, err := s.token(true)
		if errors.Is(err, io.EOF) {
			return nil, s.errAt(toff, io.ErrUnexpectedEOF, "truncated XML: the file ends inside a <record>")
		}
		if err != nil {
			return nil, err
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			if elements++; elements > maxRecordElements {
				return nil, s.errAt(off, nil, "a <record> of more than %d elements", maxRecordElements)
			}
			if len(stack) >= maxXMLDepth {
				return nil, s.errAt(toff, nil, "elements nested deeper than %d", maxXMLDepth)
			}
			k := &xmlNode{name: t.Name.Local}
			top.kids = append(top.kids, k)
			stack = append(stack, k)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if text += len(t); text > maxRecordText {
				return nil, s.errAt(off, nil, "a <record> with more than %d MiB of text", maxRecordText>>20)
			}
			top.text = append(top.text, t...)
		}
	}
	return root, nil
}

func dimOf(n *xmlNode) string {
	x, y, z := n.get("x"), n.get("y"), n.get("z")
	if x == "" && y == "" && z == "" {
		return ""
	}
	return "(" + x + "," + y + "," + z + ")"
}

// xmlKinds maps <kind> values to record kinds.
var xmlKinds = map[string]string{
	"Leak":       KindLeak,
	"Precise":    KindMemoryAccess,
	"Imprecise":  KindHardwareException,
	"Api":        KindAPI,
	"MallocFree": KindMallocFree,
	"Race":       KindRace,
	"Initcheck":  KindUninitialized,
	"Synccheck":  KindSync,
}

func (s *xmlSource) convert(x *xmlNode, off int64) (*record, error) {
	what := x.child("what")
	rec := &record{offset: off, message: strings.TrimSpace(what.get("text"))}
	kind := strings.TrimSpace(x.get("kind"))
	if k, ok := xmlKinds[kind]; ok {
		rec.kind = k
	} else if k := classify(rec.message); k != KindOther || kind == "" {
		rec.kind = k
	} else {
		rec.kind = strings.ToLower(kind)
	}
	if rec.message == "" {
		rec.message = kind
	}
	if rec.message == "" {
		// Nothing this reader knows: name the record by what it holds.
		rec.message = "a record of unknown elements: " + elementNames(x)
	}
	if v := strings.TrimSpace(what.get("size")); v != "" {
		n, err := strconv.ParseInt(strings.ReplaceAll(v, ",", ""), 10, 64)
		if err != nil || n < 0 {
			return nil, s.errAt(off, nil, "bad <size> %q", v)
		}
		rec.size, rec.hasSize = n, true
	}
	if v := strings.TrimSpace(what.get("address")); v != "" {
		a, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return nil, s.errAt(off, nil, "bad <address> %q", v)
		}
		rec.address, rec.hasAddress = a, true
	}
	rec.memoryType = strings.TrimSpace(what.get("type"))
	rec.api = strings.TrimSpace(what.get("api"))
	rec.err = strings.TrimSpace(what.get("error"))
	rec.errMessage = strings.TrimSpace(what.get("message"))
	if v := strings.TrimSpace(what.get("result")); v != "" {
		rec.result, rec.hasResult = atoi(v)
	}
	who := x.child("who")
	rec.thread, rec.block = dimOf(who.child("threadIdx")), dimOf(who.child("blockIdx"))
	if where := x.child("where"); where.get("func") != "" || where.get("path") != "" {
		f, err := s.frame(where, FrameDevice, off)
		if err != nil {
			return nil, err
		}
		// <where><pc> is the offset into the function, as "+0xc0" in text.
		f.offset, f.hasOffset, f.pc, f.hasPC = f.pc, f.hasPC, 0, false
		rec.kernel = f.function
		rec.frames = append(rec.frames, f)
	}
	if ds := x.child("deviceStack"); ds != nil {
		for _, xf := range ds.kids {
			if xf.name != "frame" {
				continue
			}
			f, err := s.frame(xf, FrameDevice, off)
			if err != nil {
				return nil, err
			}
			rec.frames = append(rec.frames, f)
		}
	}
	hs := x.child("hostStack")
	rec.saveLocation = strings.TrimSpace(hs.get("saveLocation"))
	if hs != nil {
		for _, xf := range hs.kids {
			if xf.name != "frame" {
				continue
			}
			f, err := s.frame(xf, FrameHost, off)
			if err != nil {
				return nil, err
			}
			rec.frames = append(rec.frames, f)
		}
	}
	return rec, nil
}

// elementNames lists the names of a record's child elements, for a record
// this reader does not know: "<foo>, <bar>" (at most 8, each at most 64
// bytes), or "none".
func elementNames(x *xmlNode) string {
	var names []string
	seen := map[string]bool{}
	for _, k := range x.kids {
		n := k.name
		if len(n) > 64 {
			n = n[:64] + "..."
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		if len(names) == 8 {
			names = append(names, "...")
			break
		}
		names = append(names, "<"+n+">")
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func (s *xmlSource) frame(x *xmlNode, kind string, off int64) (frame, error) {
	f := frame{kind: kind, function: strings.TrimSpace(x.get("func")), file: strings.TrimSpace(x.get("path")), module: strings.TrimSpace(x.get("module"))}
	if v := strings.TrimSpace(x.get("line")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return f, s.errAt(off, nil, "bad <line> %q", v)
		}
		f.line = n
	}
	if v := strings.TrimSpace(x.get("pc")); v != "" {
		pc, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return f, s.errAt(off, nil, "bad <pc> %q", v)
		}
		f.pc, f.hasPC = pc, true
	}
	if kind == FrameHost && !f.hasPC && f.module == "" && (strings.HasSuffix(f.file, ".py") || strings.HasPrefix(f.file, "<")) {
		f.kind = FramePython
	}
	return f, nil
}

// isEOFError reports whether err says the XML ended inside an element.
func isEOFError(err error) bool {
	var se *xml.SyntaxError
	return errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &se) && strings.Contains(se.Msg, "unexpected EOF"))
}
