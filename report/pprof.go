package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/google/pprof/profile"
)

// FormatPprof is a gzipped profile.proto of an analysis: live GPU memory
// by stack.
const FormatPprof Format = "pprof"

func init() {
	register(FormatPprof, Writer{
		Order:    50,
		Help:     "gzipped profile.proto of live bytes per stack, for go tool pprof",
		Analysis: writePprof,
	})
}

// writePprof renders r as a gzipped profile.proto (github.com/google/pprof)
// of live GPU memory, so that go tool pprof (-top, -http, -diff_base, flame
// graphs) and every pprof reader work on it. Sample types are
// inuse_objects (count of allocations) and inuse_space (bytes), as in a Go
// heap profile, inuse_space the default. Each finding that holds memory
// at a call site (every kind but oom, trend and fragmentation, which are
// not memory at a stack) is one sample: its stack, innermost first,
// labelled kind, device (absent when the input does not say) and input.
// A finding without a stack gets one frame, "(no stack)".
func writePprof(w io.Writer, r *Report, _ Options) error {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "inuse_objects", Unit: "count"},
			{Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            1,
		Comments:          []string{fmt.Sprintf("gpuleak %s: live GPU memory by call site", r.Tool.Version)},
	}
	funcs := map[[2]string]*profile.Function{}
	locs := map[Frame]*profile.Location{}
	location := func(f Frame) *profile.Location {
		if l := locs[f]; l != nil {
			return l
		}
		key := [2]string{f.Function, f.File}
		fn := funcs[key]
		if fn == nil {
			name := pprofName(f)
			fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: f.Function, Filename: f.File}
			p.Function = append(p.Function, fn)
			funcs[key] = fn
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn, Line: f.Line}}}
		p.Location = append(p.Location, l)
		locs[f] = l
		return l
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Kind == KindOOM || f.Kind == KindTrend || f.Kind == KindFragmentation {
			continue
		}
		s := &profile.Sample{
			Value: []int64{int64(max(f.Count, 0)), f.Bytes},
			Label: map[string][]string{"kind": {string(f.Kind)}, "input": {f.Path}},
		}
		if f.Device != nil {
			s.Label["device"] = []string{fmt.Sprint(*f.Device)}
		}
		stack := f.Stack
		if len(stack) == 0 {
			stack = []Frame{f.Site}
			if f.Site == (Frame{}) {
				stack = []Frame{{Function: "(no stack)"}}
			}
		}
		for _, fr := range stack {
			s.Location = append(s.Location, location(fr))
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("building the profile: %w", err)
	}
	return p.Write(w)
}

// pprofName is a frame's function as pprof shows it. pprof drops what
// stands in angle brackets (C++ template arguments), so Python's
// <module>, <lambda>, <listcomp> become "module@FILE" and so on.
func pprofName(f Frame) string {
	name := shortFunc(f.Function)
	if strings.HasPrefix(name, "<") && strings.HasSuffix(name, ">") {
		base := f.File
		if i := strings.LastIndexAny(base, `/\`); i >= 0 {
			base = base[i+1:]
		}
		name = strings.Trim(name, "<>") + "@" + base
	}
	if name == "" {
		name = "(unknown function)"
	}
	return name
}
