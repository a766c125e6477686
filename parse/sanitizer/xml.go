package sanitizer

import (
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

// xmlSource reads records from compute-sanitizer --xml output.
type xmlSource struct {
	name    string
	dec     *xml.Decoder
	started bool
	closed  bool
	ru      *run
}

func newXMLSource(r io.Reader, name string) *xmlSource {
	dec := xml.NewDecoder(r)
	dec.CharsetReader = func(charset string, in io.Reader) (io.Reader, error) {
		switch strings.ToLower(charset) {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return in, nil
		}
		return nil, fmt.Errorf("%w %q (compute-sanitizer writes UTF-8)", errEncoding, charset)
	}
	return &xmlSource{name: name, dec: dec, ru: &run{tool: ToolComputeSanitizer, processes: 1}}
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

type xmlDim struct {
	X string `xml:"x"`
	Y string `xml:"y"`
	Z string `xml:"z"`
}

func (d xmlDim) String() string {
	if d.X == "" && d.Y == "" && d.Z == "" {
		return ""
	}
	return "(" + d.X + "," + d.Y + "," + d.Z + ")"
}

type xmlFrame struct {
	Func   string `xml:"func"`
	Path   string `xml:"path"`
	Line   string `xml:"line"`
	PC     string `xml:"pc"`
	Module string `xml:"module"`
}

type xmlStack struct {
	SaveLocation string     `xml:"saveLocation"`
	Frames       []xmlFrame `xml:"frame"`
}

type xmlRecord struct {
	Kind  string `xml:"kind"`
	Level string `xml:"level"`
	Who   struct {
		Thread xmlDim `xml:"threadIdx"`
		Block  xmlDim `xml:"blockIdx"`
	} `xml:"who"`
	What struct {
		Text      string `xml:"text"`
		Address   string `xml:"address"`
		Size      string `xml:"size"`
		Type      string `xml:"type"`
		Space     string `xml:"space"`
		Direction string `xml:"direction"`
		Error     string `xml:"error"`
		API       string `xml:"api"`
		Message   string `xml:"message"`
		Result    string `xml:"result"`
	} `xml:"what"`
	Where       xmlFrame `xml:"where"`
	HostStack   xmlStack `xml:"hostStack"`
	DeviceStack xmlStack `xml:"deviceStack"`
}

func (s *xmlSource) next() (*record, error) {
	for {
		off := s.dec.InputOffset()
		tok, err := s.dec.Token()
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
			switch {
			case errors.Is(err, errEncoding):
				return nil, s.errAt(s.dec.InputOffset(), err, "XML declaration")
			case !s.started:
				return nil, s.errAt(s.dec.InputOffset(), errors.Join(parse.ErrNotMine, err), "not XML")
			case isEOFError(err):
				return nil, s.errAt(s.dec.InputOffset(), io.ErrUnexpectedEOF, "truncated XML: the file ends inside an element")
			}
			return nil, s.errAt(s.dec.InputOffset(), err, "malformed XML")
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
			if t.Name.Local != "record" {
				if err := s.dec.Skip(); err != nil {
					return nil, s.errAt(s.dec.InputOffset(), err, "malformed XML")
				}
				continue
			}
			var xr xmlRecord
			if err := s.dec.DecodeElement(&xr, &t); err != nil {
				if isEOFError(err) {
					return nil, s.errAt(s.dec.InputOffset(), io.ErrUnexpectedEOF, "truncated XML: the file ends inside a <record>")
				}
				return nil, s.errAt(s.dec.InputOffset(), err, "malformed <record>")
			}
			rec, err := s.convert(&xr, off)
			if err != nil {
				return nil, err
			}
			s.ru.records++
			return rec, nil
		case xml.EndElement:
			if s.started {
				s.closed = true
			}
		case xml.CharData:
			if !s.started && len(strings.TrimSpace(string(t))) > 0 {
				return nil, s.errAt(off, parse.ErrNotMine, "text before the root element: not compute-sanitizer XML")
			}
		}
	}
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

func (s *xmlSource) convert(x *xmlRecord, off int64) (*record, error) {
	rec := &record{offset: off, message: strings.TrimSpace(x.What.Text)}
	kind := strings.TrimSpace(x.Kind)
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
	if v := strings.TrimSpace(x.What.Size); v != "" {
		n, err := strconv.ParseInt(strings.ReplaceAll(v, ",", ""), 10, 64)
		if err != nil || n < 0 {
			return nil, s.errAt(off, nil, "bad <size> %q", v)
		}
		rec.size, rec.hasSize = n, true
	}
	if v := strings.TrimSpace(x.What.Address); v != "" {
		a, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return nil, s.errAt(off, nil, "bad <address> %q", v)
		}
		rec.address, rec.hasAddress = a, true
	}
	rec.memoryType = strings.TrimSpace(x.What.Type)
	rec.api = strings.TrimSpace(x.What.API)
	rec.err = strings.TrimSpace(x.What.Error)
	rec.errMessage = strings.TrimSpace(x.What.Message)
	if v := strings.TrimSpace(x.What.Result); v != "" {
		rec.result, rec.hasResult = atoi(v)
	}
	rec.thread, rec.block = x.Who.Thread.String(), x.Who.Block.String()
	if x.Where.Func != "" || x.Where.Path != "" {
		f, err := s.frame(x.Where, FrameDevice, off)
		if err != nil {
			return nil, err
		}
		// <where><pc> is the offset into the function, as "+0xc0" in text.
		f.offset, f.hasOffset, f.pc, f.hasPC = f.pc, f.hasPC, 0, false
		rec.kernel = f.function
		rec.frames = append(rec.frames, f)
	}
	for _, xf := range x.DeviceStack.Frames {
		f, err := s.frame(xf, FrameDevice, off)
		if err != nil {
			return nil, err
		}
		rec.frames = append(rec.frames, f)
	}
	rec.saveLocation = strings.TrimSpace(x.HostStack.SaveLocation)
	for _, xf := range x.HostStack.Frames {
		f, err := s.frame(xf, FrameHost, off)
		if err != nil {
			return nil, err
		}
		rec.frames = append(rec.frames, f)
	}
	return rec, nil
}

func (s *xmlSource) frame(x xmlFrame, kind string, off int64) (frame, error) {
	f := frame{kind: kind, function: strings.TrimSpace(x.Func), file: strings.TrimSpace(x.Path), module: strings.TrimSpace(x.Module)}
	if v := strings.TrimSpace(x.Line); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return f, s.errAt(off, nil, "bad <line> %q", v)
		}
		f.line = n
	}
	if v := strings.TrimSpace(x.PC); v != "" {
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
