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
	// What the profile cannot show is said in its comments, which pprof
	// prints above its views: an empty or partial profile must not read
	// as a run in which nothing held memory.
	left := map[Kind]int{}
	var leftOrder []Kind
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Kind == KindOOM || f.Kind == KindTrend || f.Kind == KindFragmentation {
			if left[f.Kind] == 0 {
				leftOrder = append(leftOrder, f.Kind)
			}
			left[f.Kind]++
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
	p.Comments = append(p.Comments, pprofComments(r, left, leftOrder, len(p.Sample))...)
	if err := p.CheckValid(); err != nil {
		return fmt.Errorf("building the profile: %w", err)
	}
	return p.Write(w)
}

// pprofComments says what a profile of r leaves out: the inputs not read,
// the findings that are not memory at a stack (left, by kind, in order),
// and, with no sample, that no finding holds memory at one.
func pprofComments(r *Report, left map[Kind]int, order []Kind, samples int) []string {
	var out []string
	for _, in := range r.Inputs {
		if in.Error != "" {
			out = append(out, "NOT READ: "+Clean(in.Error))
		}
	}
	if len(order) > 0 {
		var parts []string
		for _, k := range order {
			parts = append(parts, fmt.Sprintf("%d %s", left[k], k))
		}
		out = append(out, "not in this profile (not memory at a call site): "+strings.Join(parts, ", ")+" findings; see --format table or json")
	}
	if samples == 0 {
		out = append(out, "no finding holds memory at a call site")
	}
	return out
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
