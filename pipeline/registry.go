package pipeline

import (
	"bytes"
	"fmt"
	"sort"

	anoom "github.com/gpuleak/gpuleak/analyze/oom"
	"github.com/gpuleak/gpuleak/parse"
	"github.com/gpuleak/gpuleak/report"
)

// family is one input family: the formats it reads, how its inputs are
// recognised, and how they are analysed for each use. Each family lives
// in its own file and registers itself; nothing else names it.
type family struct {
	// name is the family's name, for tests and messages.
	name string
	// order places the family's sniff among the others: lower is asked
	// first. A family whose test is weaker (a phrase anywhere in text)
	// comes after those with stronger ones (magic bytes, a header). The
	// order (see families) is: snapshot 10, kineto trace 20, memory
	// timeline 30, compute-sanitizer 40, NVML 50, PyTorch text 60.
	order int
	// formats are the formats the family reads, as its parse/<family>/
	// package declares them.
	formats []parse.Format
	// sniff returns the format of an input whose (decompressed) content
	// starts with head, byte order mark removed, or parse.FormatUnknown.
	sniff func(head []byte) parse.Format
	// fallback, when set, claims an input no family's sniff recognised,
	// with the options of the run (a header-less CSV given --fields);
	// parse.FormatUnknown leaves it unclaimed.
	fallback func(head []byte, o *Options) parse.Format

	// analyze reads one input for gpuleak analyze (and diff): its entry
	// in the report and its own findings; what spans inputs goes to r.
	analyze func(r *runner, in *parse.Input, head []byte, f parse.Format) (report.Input, []report.Finding, error)
	// postmortem reads one input for gpuleak oom; nil reads it as a log
	// that may hold an OOM message (postmortemLog).
	postmortem func(r *runner, in *parse.Input, head []byte, f parse.Format) (report.Input, anoom.Input, error)
	// trend reads one input for gpuleak trend; nil reads it as an NVML
	// sample log (trendSamples), whatever it was recognised as: the
	// reader says whether it is one. It starts the progress callback
	// itself.
	trend func(r *runner, in *parse.Input, f parse.Format) (report.TrendInput, error)
	// tables emits the Arrow tables an input parses into, batch by batch
	// (gpuleak export); nil: the family has no tables of its own to export
	// (its findings are exported).
	tables func(o *Options, in *parse.Input, f parse.Format, emit Emit) error
}

// families are the registered families, by order; byFormat finds a
// format's family. Both are filled by register, from the families'
// files, before main runs, and only read afterwards.
var (
	families []*family
	byFormat = map[parse.Format]*family{}
)

// register adds a family. Two families claiming one format, or one order,
// is a programming error.
func register(f *family) {
	for _, g := range families {
		if g.order == f.order {
			panic(fmt.Sprintf("pipeline: families %s and %s both have order %d", g.name, f.name, f.order))
		}
	}
	for _, ft := range f.formats {
		if g := byFormat[ft]; g != nil {
			panic(fmt.Sprintf("pipeline: format %s is claimed by %s and %s", ft, g.name, f.name))
		}
		byFormat[ft] = f
	}
	families = append(families, f)
	sort.Slice(families, func(i, j int) bool { return families[i].order < families[j].order })
}

// sniffAs makes a family's sniff of a test that recognises one format.
func sniffAs(f parse.Format, test func(head []byte) bool) func([]byte) parse.Format {
	return func(head []byte) parse.Format {
		if test(head) {
			return f
		}
		return parse.FormatUnknown
	}
}

// Detect returns the format of an input whose (decompressed) content
// starts with head, at most parse.SniffLen bytes, asking each family's
// sniff in order; parse.FormatUnknown when none claims it. A UTF-8 byte
// order mark is skipped.
func Detect(head []byte) parse.Format {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	for _, f := range families {
		if ft := f.sniff(head); ft != parse.FormatUnknown {
			return ft
		}
	}
	return parse.FormatUnknown
}

// detect is Detect, then the families' fallbacks, which see the run's
// options.
func (o *Options) detect(head []byte) parse.Format {
	if ft := Detect(head); ft != parse.FormatUnknown {
		return ft
	}
	for _, f := range families {
		if f.fallback != nil {
			if ft := f.fallback(head, o); ft != parse.FormatUnknown {
				return ft
			}
		}
	}
	return parse.FormatUnknown
}

// FamilyOf names the input family (compute-sanitizer, nvml,
// pytorch-snapshot, ...) that reads format, as a report's Input.Format
// names it; "" for a format no family claims.
func FamilyOf(format string) string {
	if f := byFormat[parse.Format(format)]; f != nil {
		return f.name
	}
	return ""
}
